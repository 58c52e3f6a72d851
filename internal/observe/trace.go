package observe

import (
	"bufio"
	"fmt"
	"os"

	"optimize/simcore/metrics"
	"optimize/simcore/workload"
)

// Rows are the result's records as TraceV2 rows. input_tokens is the
// prompt asked for after its shared prefix (BLIS's: the replay adds the
// prefix_length tokens of the prefix_group itself); output_tokens what
// was generated (0 for a request that failed before its first chunk).
func (res *Result) Rows(model string) []workload.TraceV2Row {
	rows := make([]workload.TraceV2Row, len(res.Records))
	for i := range res.Records {
		r := &res.Records[i]
		input, prefix := r.InputTokens-r.PrefixLength, r.PrefixLength
		if input < 0 { // a prefix longer than the prompt: count it all as the row's own
			input, prefix = r.InputTokens, 0
		}
		rows[i] = workload.TraceV2Row{
			RequestID: r.ID, ClientID: r.ClientID, TenantID: r.Tenant, SLOClass: r.Class,
			SessionID: r.SessionID, RoundIndex: r.Round, PrefixGroup: r.PrefixGroup, PrefixLength: prefix,
			Streaming: true, InputTokens: input, OutputTokens: r.Generated, Model: model,
			ServerInputTokens: r.ServerInputTokens, ArrivalTimeUs: r.ArrivalUs, SendTimeUs: r.SendUs,
			FirstChunkTimeUs: r.FirstChunkUs, LastChunkTimeUs: r.LastChunkUs, NumChunks: len(r.Chunks),
			Status: r.Status, ErrorMessage: r.Error, FinishReason: r.FinishReason, XRequestID: r.XRequestID,
		}
	}
	return rows
}

// ITL is every chunk time of the records that completed, as BLIS's ITL
// rows (BLIS records no chunks of a request that failed).
func (res *Result) ITL() []workload.ITLChunk {
	var out []workload.ITLChunk
	for i := range res.Records {
		r := &res.Records[i]
		if r.Status != StatusOK {
			continue
		}
		for k, at := range r.Chunks {
			out = append(out, workload.ITLChunk{RequestID: r.ID, ChunkIndex: k, TimestampUs: at})
		}
	}
	return out
}

// WriteTrace writes the result as a TraceV2 of mode real: h to
// headerPath, the rows to dataPath and, when itlPath is not "", the chunk
// times to it as BLIS's ITL CSV.
func (res *Result) WriteTrace(headerPath, dataPath, itlPath string, h workload.RealTraceHeader) error {
	h.WarmUpRequests = res.WarmedUp
	if err := writeFile(headerPath, func(w *bufio.Writer) error { return workload.WriteRealTraceHeader(w, h) }); err != nil {
		return err
	}
	if err := writeFile(dataPath, func(w *bufio.Writer) error { return workload.WriteTraceV2Rows(w, res.Rows(h.Model)) }); err != nil {
		return err
	}
	if itlPath == "" {
		return nil
	}
	return writeFile(itlPath, func(w *bufio.Writer) error { return workload.WriteITL(w, res.ITL()) })
}

// writeFile writes path through write; a failure names the file.
func writeFile(path string, write func(*bufio.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// Summary is what a run measured, over its recorded requests. Latencies
// are BLIS's observe's, from the send: TTFT to the first chunk, E2E to the
// last, ITL the gaps between a request's chunks; Wait is send − arrival,
// the time a request waited for a concurrency slot. All are over the
// requests that completed.
type Summary struct {
	Requests     int          `json:"requests"`
	OK           int          `json:"ok"`
	Errors       int          `json:"errors"`
	Timeouts     int          `json:"timeouts"`
	WarmUp       int          `json:"warm_up_requests"`
	Stopped      bool         `json:"stopped"`
	TTFT         metrics.Dist `json:"ttft_ms"`
	E2E          metrics.Dist `json:"e2e_ms"`
	ITL          metrics.Dist `json:"itl_ms"`
	Wait         metrics.Dist `json:"wait_ms"`
	DurationSec  float64      `json:"duration_s"`
	OutputTokens int          `json:"output_tokens"`
	TokensPerSec float64      `json:"tokens_per_sec"`
	// InputTokens and ServerInputTokens are the prompt tokens asked for
	// and counted by the server, summed over the completed requests that
	// reported a count: how closely the prompts hit their lengths.
	InputTokens       int `json:"input_tokens"`
	ServerInputTokens int `json:"server_input_tokens"`
}

// Summarize summarises the result.
func (res *Result) Summarize() Summary {
	s := Summary{Requests: len(res.Records), WarmUp: res.WarmedUp, Stopped: res.Stopped}
	var ttft, e2e, itl, wait []int64
	for i := range res.Records {
		r := &res.Records[i]
		switch r.Status {
		case StatusOK:
			s.OK++
		case StatusTimeout:
			s.Timeouts++
			continue
		default:
			s.Errors++
			continue
		}
		wait = append(wait, r.SendUs-r.ArrivalUs)
		s.OutputTokens += r.Generated
		if r.ServerInputTokens > 0 {
			s.InputTokens += r.InputTokens
			s.ServerInputTokens += r.ServerInputTokens
		}
		if len(r.Chunks) == 0 {
			continue
		}
		ttft = append(ttft, r.FirstChunkUs-r.SendUs)
		e2e = append(e2e, r.LastChunkUs-r.SendUs)
		for k := 1; k < len(r.Chunks); k++ {
			itl = append(itl, r.Chunks[k]-r.Chunks[k-1])
		}
	}
	s.TTFT, s.E2E, s.ITL, s.Wait = metrics.DistOf(ttft), metrics.DistOf(e2e), metrics.DistOf(itl), metrics.DistOf(wait)
	if d := res.End.Sub(res.Start).Seconds(); d > 0 {
		s.DurationSec = d
		s.TokensPerSec = float64(s.OutputTokens) / d
	}
	return s
}
