package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const traceHeader = "trace_version: 2\ntime_unit: microseconds\nmode: generated\nwarm_up_requests: 0\nserver: {type: vllm, model: m, block_size: 16}\n"

const traceRows = `request_id,client_id,tenant_id,slo_class,session_id,round_index,prefix_group,streaming,input_tokens,output_tokens,text_tokens,image_tokens,audio_tokens,video_tokens,reason_ratio,arrival_time_us,send_time_us,first_chunk_time_us,last_chunk_time_us,num_chunks,status,error_message
0,c1,t1,critical,,0,g,false,300,40,300,0,0,0,0,1000,1000,0,0,0,ok,
1,c2,t2,batch,,0,g,false,200,20,200,0,0,0,0,1500,1500,0,0,0,ok,
2,c1,t1,critical,,0,,false,120,9,120,0,0,0,0,90000,90000,0,0,0,ok,
`

// `simulate --trace` replays a TraceV2 trace: the CSV beside the header by
// default, or the one --trace-data names.
func TestSimulateReplaysTrace(t *testing.T) {
	dir := t.TempDir()
	header := filepath.Join(dir, "run.yaml")
	os.WriteFile(header, []byte(traceHeader), 0o644)
	os.WriteFile(filepath.Join(dir, "run.csv"), []byte(traceRows), 0o644)
	s := simulateMean(t, "--trace", header, "--num-instances", "2")
	if s.Completed != 3 || s.PerSLO["critical"].Count != 2 || s.PerSLO["batch"].Count != 1 {
		t.Fatalf("replay: %+v", s)
	}
	other := filepath.Join(dir, "two.csv")
	os.WriteFile(other, []byte(strings.Join(strings.Split(traceRows, "\n")[:3], "\n")+"\n"), 0o644)
	if s := simulateMean(t, "--trace", header, "--trace-data", other); s.Completed != 2 {
		t.Fatalf("--trace-data: %v completed, want 2", s.Completed)
	}
	code, _, errs := run(t, "simulate", "--trace", filepath.Join(dir, "missing.yaml"))
	if code != 2 || !strings.Contains(errs, "missing.yaml") {
		t.Fatalf("missing trace: exit %d, %q", code, errs)
	}
}
