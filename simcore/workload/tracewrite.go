package workload

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
)

// TraceV2 CSV columns as BLIS (f90a1e3a) writes them, in its order: its
// reader finds most columns by position, so a trace it reads must have
// them in this order. traceV2Optional are the columns it adds only when
// some row has a value for them: vllm_priority right after slo_class,
// slo_target_us right after deadline_us, the others at the end. BLIS
// 7fd7a88d wrote a subset of the same names. Every one of them is a column
// LoadTrace accepts (trace.go sorts them into the ones it reads and the
// ones it ignores).
var (
	traceV2Order = []string{
		"request_id", "client_id", "tenant_id", "slo_class", "session_id", "round_index",
		"prefix_group", "prefix_length", "streaming", "input_tokens", "output_tokens",
		"text_tokens", "image_tokens", "audio_tokens", "video_tokens", "reason_ratio",
		"model", "deadline_us", "server_input_tokens",
		"arrival_time_us", "send_time_us", "first_chunk_time_us", "last_chunk_time_us",
		"num_chunks", "status", "error_message", "finish_reason",
	}
	traceV2Optional = []string{"vllm_priority", "slo_target_us", "x_request_id", "adapter", "think_time_us"}
)

// RealTraceHeader is what the header of a recording of a real server (a
// TraceV2 trace of mode real) says about the run.
type RealTraceHeader struct {
	CreatedAt      time.Time
	WarmUpRequests int    // requests sent first and left out of the rows
	WorkloadSpec   string // what was sent: a spec file or a workload name ("" = not said)
	WorkloadSeed   *int64 // the seed the requests were drawn with (nil = none)
	ServerType     string // e.g. vllm
	Model          string // the served model name the requests named
	MeasuredRTTMs  float64
}

// WriteRealTraceHeader writes the header YAML of a trace of mode real:
// trace_version 3 (BLIS's current one; LoadTrace reads 2 and 3), times
// in µs, and only keys BLIS's header declares, so that both LoadTrace and
// BLIS's strict reader load it.
func WriteRealTraceHeader(w io.Writer, h RealTraceHeader) error {
	out := traceHeader{
		Version:        3,
		TimeUnit:       "us",
		Mode:           "real",
		WarmUpRequests: h.WarmUpRequests,
		WorkloadSeed:   h.WorkloadSeed,
		WorkloadSpec:   h.WorkloadSpec,
	}
	if !h.CreatedAt.IsZero() {
		out.CreatedAt = h.CreatedAt.UTC().Format(time.RFC3339)
	}
	if err := out.Server.Encode(ServerInfo{Type: h.ServerType, Model: h.Model}); err != nil {
		return err
	}
	if err := out.Network.Encode(traceNetwork{MeasuredRTTMs: h.MeasuredRTTMs}); err != nil {
		return err
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(&out); err != nil {
		return fmt.Errorf("writing trace header: %w", err)
	}
	return enc.Close()
}

// TraceV2Row is one request of a TraceV2 CSV. Times are µs on one clock
// (a real run's: since the Unix epoch). InputTokens is what the client
// asked for after the shared prefix (PrefixLength tokens of PrefixGroup),
// as BLIS writes it; ServerInputTokens is the prompt the server counted
// (0 = not known).
type TraceV2Row struct {
	RequestID         int
	ClientID          string
	TenantID          string
	SLOClass          string
	SessionID         string
	RoundIndex        int
	PrefixGroup       string
	PrefixLength      int
	Streaming         bool
	InputTokens       int
	OutputTokens      int
	Model             string
	ServerInputTokens int
	ArrivalTimeUs     int64
	SendTimeUs        int64
	FirstChunkTimeUs  int64
	LastChunkTimeUs   int64
	NumChunks         int
	Status            string // ok, error or timeout
	ErrorMessage      string
	FinishReason      string
	XRequestID        string // the x-request-id header the request carried ("" = none)
}

// WriteTraceV2Rows writes rows as a TraceV2 CSV in BLIS's column order,
// x_request_id last when any row has one (as BLIS writes a real trace).
// Columns BLIS writes for requests this type does not describe (modality
// token counts, reason ratio, deadline) are written as zero, as BLIS
// writes them for text requests without a deadline.
func WriteTraceV2Rows(w io.Writer, rows []TraceV2Row) error {
	withID := false
	for i := range rows {
		withID = withID || rows[i].XRequestID != ""
	}
	cw := csv.NewWriter(w)
	names := traceV2Order
	if withID {
		names = append(names[:len(names):len(names)], "x_request_id")
	}
	if err := cw.Write(names); err != nil {
		return err
	}
	itoa := strconv.Itoa
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	rec := make([]string, 0, len(names))
	for i := range rows {
		r := &rows[i]
		rec = append(rec[:0],
			itoa(r.RequestID), r.ClientID, r.TenantID, r.SLOClass, r.SessionID, itoa(r.RoundIndex),
			r.PrefixGroup, itoa(r.PrefixLength), strconv.FormatBool(r.Streaming), itoa(r.InputTokens), itoa(r.OutputTokens),
			"0", "0", "0", "0", "0",
			r.Model, "0", itoa(r.ServerInputTokens),
			i64(r.ArrivalTimeUs), i64(r.SendTimeUs), i64(r.FirstChunkTimeUs), i64(r.LastChunkTimeUs),
			itoa(r.NumChunks), r.Status, r.ErrorMessage, r.FinishReason)
		if withID {
			rec = append(rec, r.XRequestID)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ITLChunk is one streamed chunk of a request: BLIS's ITL CSV row
// (request_id, chunk_index from 0, timestamp_us since the Unix epoch).
type ITLChunk struct {
	RequestID   int
	ChunkIndex  int
	TimestampUs int64
}

// WriteITL writes chunks as BLIS's ITL CSV.
func WriteITL(w io.Writer, chunks []ITLChunk) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"request_id", "chunk_index", "timestamp_us"}); err != nil {
		return err
	}
	for _, c := range chunks {
		if err := cw.Write([]string{strconv.Itoa(c.RequestID), strconv.Itoa(c.ChunkIndex), strconv.FormatInt(c.TimestampUs, 10)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
