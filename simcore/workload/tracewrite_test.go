package workload

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"optimize/simcore"
)

// blisTraceHeader lists the keys of BLIS's (f90a1e3a) TraceHeader, which
// it decodes with unknown keys refused: a header this package writes must
// decode into it.
type blisTraceHeader struct {
	Version              int            `yaml:"trace_version"`
	TimeUnit             string         `yaml:"time_unit"`
	CreatedAt            string         `yaml:"created_at"`
	Mode                 string         `yaml:"mode"`
	WarmUpRequests       int            `yaml:"warm_up_requests"`
	WorkloadSeed         *int64         `yaml:"workload_seed"`
	WorkloadSpec         string         `yaml:"workload_spec"`
	SessionContextGrowth string         `yaml:"session_context_growth"`
	GoodputSLOTargets    map[string]any `yaml:"goodput_slo_targets"`
	KVOffload            map[string]any `yaml:"kv_offload"`
	ObservedKVMetrics    map[string]any `yaml:"observed_kv_metrics"`
	Server               *struct {
		Type                 string  `yaml:"type"`
		Model                string  `yaml:"model"`
		TensorParallel       int     `yaml:"tensor_parallel"`
		MaxNumSeqs           int     `yaml:"max_num_seqs"`
		BlockSize            int     `yaml:"block_size"`
		GPUMemoryUtilization float64 `yaml:"gpu_memory_utilization"`
		MaxModelLen          int64   `yaml:"max_model_len"`
	} `yaml:"server"`
	Network *struct {
		MeasuredRTTMs float64 `yaml:"measured_rtt_ms"`
	} `yaml:"network"`
}

// A trace written as a real run's loads in LoadTrace and, by its header's
// keys and its columns' positions, in BLIS's reader; it replays at its
// send times with the server's prompt counts, except for a prefix
// group's row, which keeps the tokens after the prefix (as BLIS replays).
func TestWriteRealTrace(t *testing.T) {
	const t0 = int64(1_782_183_938_000_000) // µs since the epoch
	rows := []TraceV2Row{
		{RequestID: 3, TenantID: "a", SLOClass: "critical", Streaming: true, InputTokens: 100, OutputTokens: 10, Model: "m",
			ServerInputTokens: 101, ArrivalTimeUs: t0 + 1000, SendTimeUs: t0 + 5000, FirstChunkTimeUs: t0 + 35000,
			LastChunkTimeUs: t0 + 80000, NumChunks: 10, Status: "ok", FinishReason: "length", XRequestID: "id-3"},
		{RequestID: 4, TenantID: "b", PrefixGroup: "sys", PrefixLength: 64, Streaming: true, InputTokens: 50, OutputTokens: 0, Model: "m",
			ServerInputTokens: 115, ArrivalTimeUs: t0 + 2000, SendTimeUs: t0 + 2000, Status: "error",
			ErrorMessage: "HTTP 500: engine, \"dead\"", XRequestID: "id-4"},
	}
	seed := int64(42)
	var hb, db bytes.Buffer
	if err := WriteRealTraceHeader(&hb, RealTraceHeader{CreatedAt: time.Unix(1_782_183_938, 0), WarmUpRequests: 3,
		WorkloadSpec: "orthogonal-slo", WorkloadSeed: &seed, ServerType: "vllm", Model: "m", MeasuredRTTMs: 0.25}); err != nil {
		t.Fatal(err)
	}
	if err := WriteTraceV2Rows(&db, rows); err != nil {
		t.Fatal(err)
	}

	var blis blisTraceHeader
	dec := yaml.NewDecoder(bytes.NewReader(hb.Bytes()))
	dec.KnownFields(true)
	if err := dec.Decode(&blis); err != nil {
		t.Fatalf("BLIS's header keys refuse it: %v\n%s", err, hb.String())
	}
	if blis.Version != 3 || blis.TimeUnit != "us" || blis.Mode != "real" || blis.WarmUpRequests != 3 || blis.CreatedAt != "2026-06-23T03:05:38Z" ||
		blis.Server == nil || blis.Server.Model != "m" || blis.Server.Type != "vllm" || blis.Network == nil || blis.Network.MeasuredRTTMs != 0.25 ||
		*blis.WorkloadSeed != 42 || blis.WorkloadSpec != "orthogonal-slo" {
		t.Errorf("header %+v\n%s", blis, hb.String())
	}
	if strings.Contains(hb.String(), "goodput") || strings.Contains(hb.String(), "kv_offload") {
		t.Errorf("keys without values written:\n%s", hb.String())
	}

	// BLIS's reader finds these columns by position (f90a1e3a's
	// parseTraceRecord, without the optional vllm_priority and
	// slo_target_us) and x_request_id by name.
	recs, err := csv.NewReader(bytes.NewReader(db.Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	at := map[int]string{0: "request_id", 2: "tenant_id", 3: "slo_class", 7: "prefix_length", 8: "streaming", 9: "input_tokens",
		10: "output_tokens", 15: "reason_ratio", 18: "server_input_tokens", 19: "arrival_time_us", 20: "send_time_us",
		21: "first_chunk_time_us", 22: "last_chunk_time_us", 23: "num_chunks", 24: "status", 25: "error_message", 26: "finish_reason", 27: "x_request_id"}
	for i, name := range at {
		if recs[0][i] != name {
			t.Errorf("column %d is %q, BLIS reads %s there", i, recs[0][i], name)
		}
	}
	if len(recs[0]) != 28 || recs[2][25] != rows[1].ErrorMessage || recs[1][20] != "1782183938005000" {
		t.Errorf("rows %q", recs)
	}

	dir := t.TempDir()
	hp := filepath.Join(dir, "trace.yaml")
	if err := os.WriteFile(hp, hb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "trace.csv"), db.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := LoadTrace(hp, "", 16)
	if err != nil {
		t.Fatal(err)
	}
	var got []simcore.Request
	for {
		var r simcore.Request
		r.Reset()
		if !src.Pop(&r) {
			break
		}
		got = append(got, r)
	}
	// Row 4 was sent 3 ms before row 3: it replays first, at 0.
	if len(got) != 2 || got[0].Arrival != 0 || got[1].Arrival != 3000 {
		t.Fatalf("arrivals %+v", got)
	}
	if got[0].InputLen != 64+50 || got[1].InputLen != 101 || got[1].SLO != simcore.SLOCritical {
		t.Errorf("inputs %d and %d, want the prefix + 50 and the server's 101", got[0].InputLen, got[1].InputLen)
	}
}

// The ITL file is BLIS's: request_id, chunk_index, timestamp_us.
func TestWriteITL(t *testing.T) {
	var b bytes.Buffer
	if err := WriteITL(&b, []ITLChunk{{3, 0, 1_782_183_938_035_000}, {3, 1, 1_782_183_938_040_000}}); err != nil {
		t.Fatal(err)
	}
	if want := "request_id,chunk_index,timestamp_us\n3,0,1782183938035000\n3,1,1782183938040000\n"; b.String() != want {
		t.Errorf("%q", b.String())
	}
}
