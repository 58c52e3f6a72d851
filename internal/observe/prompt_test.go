package observe

import (
	"context"
	"strings"
	"testing"
	"time"

	"optimize/internal/testkit"
)

// A prompt's blocks are written from their hashes: requests that share
// their first blocks share their first words, block for block, and the
// prompt has as many words as its tokens need.
func TestPromptsShareBlocks(t *testing.T) {
	p := Prompts{TokensPerWord: 1.25, Overhead: 1, BlockSize: 16}
	a := strings.Fields(p.Text([]uint64{11, 12, 13}, 1, 101))
	b := strings.Fields(p.Text([]uint64{11, 12, 99}, 2, 101))
	perBlock := 13                                   // 16 tokens at 1.25 tokens a word, rounded
	if len(a) != 3*perBlock+42 || len(b) != len(a) { // 3 blocks, then (101 − 1 − 48) / 1.25 words
		t.Fatalf("%d and %d words", len(a), len(b))
	}
	if strings.Join(a[:2*perBlock], " ") != strings.Join(b[:2*perBlock], " ") {
		t.Errorf("the shared blocks' words differ")
	}
	if strings.Join(a[2*perBlock:3*perBlock], " ") == strings.Join(b[2*perBlock:3*perBlock], " ") {
		t.Errorf("different blocks have the same words")
	}
	// Blocks beyond the prompt's length are not written; a prompt is never empty.
	if n := len(strings.Fields(p.Text([]uint64{1, 2, 3}, 3, 20))); n != perBlock+2 {
		t.Errorf("%d words for 20 tokens", n)
	}
	if got := p.Text(nil, 4, 0); len(strings.Fields(got)) != 1 {
		t.Errorf("%q for 0 tokens", got)
	}
}

// Calibrate finds the server's tokens per word and its per-prompt
// overhead (the fake server counts a word a token, plus a BOS token, plus
// 10 for the chat template); Models and RTT ask /v1/models.
func TestCalibrateModelsRTT(t *testing.T) {
	v := testkit.NewVLLM(t, "served", time.Millisecond, time.Millisecond)
	ctx := context.Background()
	for api, overhead := range map[string]int{"completions": 1, "chat": 11} {
		c := &Client{BaseURL: v.URL, Model: "served", API: api}
		p, measured, err := c.Calibrate(ctx, 16, time.Second)
		if err != nil || !measured || p.TokensPerWord != 1 || p.Overhead != overhead || p.BlockSize != 16 {
			t.Errorf("%s: %+v, measured %v, %v", api, p, measured, err)
		}
	}
	c := &Client{BaseURL: v.URL, Model: "other"}
	if _, _, err := c.Calibrate(ctx, 16, time.Second); err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("an unknown model: %v", err)
	}
	if names, err := c.Models(ctx); err != nil || len(names) != 1 || names[0] != "served" {
		t.Errorf("models %v, %v", names, err)
	}
	if rtt, err := c.RTT(ctx, 3); err != nil || rtt <= 0 || rtt > time.Second {
		t.Errorf("rtt %v, %v", rtt, err)
	}
}
