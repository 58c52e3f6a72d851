package observe

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"
)

// words are the prompts' vocabulary: common short English words, each
// one token (with its leading space) in the byte-pair tokenizers of the
// usual open models, so that a prompt's token count follows its word
// count closely. Calibrate measures the ratio on the server.
var words = strings.Fields(`
	time year people way day man thing woman life child world school state family student group
	country problem hand part place case week company system program question work government number night point
	home water room mother area money story fact month lot right study book eye job word business
	issue side kind head house service friend father power hour game line end member law car city
	name team minute idea kid body back parent face others level office door health person art war
	history party result change morning reason research girl guy moment air teacher force order boy age
	policy music market sense nation plan college interest death course field rate road river garden stone
	table window paper color light bird tree horse ship train fire snow rain wind star sun moon
`)

// Prompts writes prompts of a given length whose shared parts are
// shared text: the first blocks of a request's prompt are written from
// its block hashes (a shared prefix's blocks have the same hashes in
// every request that shares it, so the server's prefix cache sees the
// same text), the rest from a stream of its own.
type Prompts struct {
	TokensPerWord float64 // server tokens per word of the vocabulary (0 = 1)
	Overhead      int     // tokens the server adds to every prompt (a BOS token, a chat template)
	BlockSize     int     // tokens a block hash stands for (0 = no blocks)
}

// Text returns a prompt the server counts as about tokens tokens: the
// first blocks of blocks (as many whole blocks as fit), then words drawn
// from tail. Equal hashes give equal text.
func (p Prompts) Text(blocks []uint64, tail uint64, tokens int) string {
	tpw := p.TokensPerWord
	if tpw <= 0 {
		tpw = 1
	}
	content := max(tokens-p.Overhead, 1)
	var b strings.Builder
	b.Grow(content * 7)
	n := 0
	if p.BlockSize > 0 {
		n = min(len(blocks), content/p.BlockSize)
	}
	perBlock := max(int(math.Round(float64(p.BlockSize)/tpw)), 1)
	for _, h := range blocks[:n] {
		writeWords(&b, h, perBlock)
	}
	rest := int(math.Round(float64(content-n*p.BlockSize) / tpw))
	if b.Len() == 0 {
		rest = max(rest, 1)
	}
	writeWords(&b, tail^0x5bd1e9955bd1e995, rest) // tail's own stream, apart from any block's
	return strings.TrimSuffix(b.String(), " ")
}

// writeWords writes n words drawn from seed (SplitMix64, a fixed
// sequence per seed), each followed by a space.
func writeWords(b *strings.Builder, seed uint64, n int) {
	for range n {
		seed += 0x9e3779b97f4a7c15
		z := seed
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		z ^= z >> 31
		b.WriteString(words[z%uint64(len(words))])
		b.WriteByte(' ')
	}
}

// calibrationWords are the lengths of Calibrate's two prompts, in words.
const calibrationShort, calibrationLong = 16, 16 + 512

// Calibrate measures how the server counts the vocabulary: two prompts
// of calibrationShort and calibrationLong words, one output token each;
// the difference of their usage.prompt_tokens over the difference of
// their words is the tokens per word, what the short one counts beyond
// its words the overhead. blockSize is the returned Prompts' block size.
// A server that reports no prompt tokens gives 1 token per word and no
// overhead, and measured false; a request that fails is an error.
func (c *Client) Calibrate(ctx context.Context, blockSize int, timeout time.Duration) (p Prompts, measured bool, err error) {
	p = Prompts{TokensPerWord: 1, BlockSize: blockSize}
	var counts [2]int
	for i, n := range []int{calibrationShort, calibrationLong} {
		var b strings.Builder
		writeWords(&b, uint64(n), n)
		rec := c.Send(ctx, Request{ID: -1, Prompt: strings.TrimSpace(b.String()), InputTokens: n, OutputTokens: 1}, c.now(), timeout)
		if rec.Status != StatusOK {
			return p, false, fmt.Errorf("a %d-word calibration prompt to %s: %s: %s", n, c.endpoint(), rec.Status, rec.Error)
		}
		counts[i] = rec.ServerInputTokens
	}
	if counts[0] <= 0 || counts[1] <= counts[0] {
		return p, false, nil
	}
	p.TokensPerWord = float64(counts[1]-counts[0]) / (calibrationLong - calibrationShort)
	p.Overhead = max(0, int(math.Round(float64(counts[0])-calibrationShort*p.TokensPerWord)))
	return p, true, nil
}

// Models returns the model names the server serves (GET /v1/models).
func (c *Client) Models(ctx context.Context) ([]string, error) {
	resp, err := c.get(ctx, "/v1/models")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /v1/models: HTTP %d: %s", resp.StatusCode, oneLine(string(body)))
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("GET /v1/models: %v", err)
	}
	var names []string
	for _, m := range list.Data {
		names = append(names, m.ID)
	}
	return names, nil
}

// RTT measures the network round trip to the server: the shortest of n
// GET /v1/models exchanges on one kept-alive connection (the first, which
// opens the connection, is not counted). Any HTTP answer counts.
func (c *Client) RTT(ctx context.Context, n int) (time.Duration, error) {
	best := time.Duration(-1)
	for i := 0; i <= n; i++ {
		t0 := c.now()
		resp, err := c.get(ctx, "/v1/models")
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if d := c.now().Sub(t0); i > 0 && (best < 0 || d < best) {
			best = d
		}
	}
	return best, nil
}

func (c *Client) get(ctx context.Context, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(c.BaseURL, "/")+path, nil)
	if err != nil {
		return nil, err
	}
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	return c.http().Do(req)
}
