package workload

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"optimize/simcore"
)

const traceHeaderYAML = `trace_version: 2
time_unit: microseconds
mode: generated
warm_up_requests: 0
server: {type: vllm, model: m, block_size: 16}
`

// A 7fd7a88d-style trace (no prefix_length column: groups get 50 tokens).
const traceCSV = `request_id,client_id,tenant_id,slo_class,session_id,round_index,prefix_group,streaming,input_tokens,output_tokens,text_tokens,image_tokens,audio_tokens,video_tokens,reason_ratio,arrival_time_us,send_time_us,first_chunk_time_us,last_chunk_time_us,num_chunks,status,error_message
0,c1,t1,critical,s1,0,g,false,100,10,100,0,0,0,0,1000,1000,0,0,0,ok,
1,c2,t2,batch,,0,g,true,70,5,70,0,0,0,0,500,500,0,0,0,ok,
2,c1,t1,critical,s1,1,,false,30,7,30,0,0,0,0,1000,1000,0,0,0,ok,
`

func writeTrace(t *testing.T, header, data string) string {
	t.Helper()
	dir := t.TempDir()
	hp := filepath.Join(dir, "trace.yaml")
	if err := os.WriteFile(hp, []byte(header), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "trace.csv"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return hp
}

func drainTrace(src *TraceSource) []snapshot {
	var out []snapshot
	for r := pop(src); r != nil; r = pop(src) {
		out = append(out, snap(r))
		src.Done(r, r.Arrival, true)
	}
	return out
}

func TestTraceReplay(t *testing.T) {
	src, err := LoadTrace(writeTrace(t, traceHeaderYAML, traceCSV), "", 16)
	if err != nil {
		t.Fatal(err)
	}
	got := drainTrace(src)
	if len(got) != 3 {
		t.Fatalf("%d requests", len(got))
	}
	// Arrival order; rows 0 and 2 (both at 1000 µs) keep their file order.
	want := []struct {
		arrival       simcore.Tick
		input, output int32
		slo           simcore.SLOClass
		client, round int32
		session       int32
	}{
		{500, 50 + 70, 5, simcore.SLOBatch, 1, 0, -1},
		{1000, 50 + 100, 10, simcore.SLOCritical, 0, 0, 0},
		{1000, 30, 7, simcore.SLOCritical, 0, 1, 0},
	}
	for i, w := range want {
		g := got[i]
		if g.ID != int64(i) || g.Arrival != w.arrival || g.InputLen != w.input || g.OutputLen != w.output ||
			g.SLO != w.slo || g.Client != w.client || g.Round != w.round || g.Session != w.session {
			t.Errorf("request %d: %+v, want %+v", i, g, w)
		}
		if len(g.Blocks) != int(g.InputLen+g.OutputLen)/16 {
			t.Errorf("request %d: %d blocks for %d tokens", i, len(g.Blocks), g.InputLen)
		}
	}
	const prefixBlocks = 50 / 16
	if !slices.Equal(got[0].Blocks[:prefixBlocks], got[1].Blocks[:prefixBlocks]) {
		t.Error("requests of one prefix group do not share the prefix blocks")
	}
	if got[0].Blocks[prefixBlocks] == got[1].Blocks[prefixBlocks] {
		t.Error("blocks after the prefix are equal")
	}
}

func TestTracePrefixLengthColumn(t *testing.T) {
	data := "arrival_time_us,input_tokens,output_tokens,prefix_group,prefix_length\n" +
		"0,10,1,a,64\n5,10,1,a,0\n9,20,1,b,0\n"
	src, err := LoadTrace(writeTrace(t, traceHeaderYAML, data), "", 16)
	if err != nil {
		t.Fatal(err)
	}
	got := drainTrace(src)
	if got[0].InputLen != 74 || got[1].InputLen != 74 || got[2].InputLen != 20 {
		t.Errorf("inputs %d %d %d, want 74 74 20 (group b has no prefix_length)", got[0].InputLen, got[1].InputLen, got[2].InputLen)
	}
}

func TestTraceErrors(t *testing.T) {
	cases := []struct {
		name, header, data string
		want               []string
	}{
		{"bad integer", traceHeaderYAML, strings.Replace(traceCSV, ",false,30,7,", ",false,3x,7,", 1),
			[]string{"trace.csv: line 4, column input_tokens: \"3x\" is not an integer"}},
		{"negative arrival", traceHeaderYAML, traceCSV + "3,c,t,,,0,,false,5,5,5,0,0,0,0,-4,0,0,0,0,ok,\n",
			[]string{"line 5, column arrival_time_us: -4 is out of range"}},
		{"unknown slo", traceHeaderYAML, strings.Replace(traceCSV, "batch", "gold", 1),
			[]string{"line 3, column slo_class: unknown value \"gold\""}},
		{"unknown column", traceHeaderYAML, "arrival_time_us,input_tokens,output_tokens,colour\n1,2,3,red\n",
			[]string{"trace.csv: line 1: unknown column \"colour\" (allowed: arrival_time_us,"}},
		{"missing column", traceHeaderYAML, "arrival_time_us,input_tokens\n1,2\n",
			[]string{"missing column \"output_tokens\""}},
		{"wrong field count", traceHeaderYAML, "arrival_time_us,input_tokens,output_tokens\n1,2,3\n4,5\n",
			[]string{"trace.csv: line 3: wrong number of fields"}},
		{"no rows", traceHeaderYAML, "arrival_time_us,input_tokens,output_tokens\n",
			[]string{"no requests"}},
		{"zero input", traceHeaderYAML, "arrival_time_us,input_tokens,output_tokens\n1,0,3\n",
			[]string{"line 2, column input_tokens: must be >= 1"}},
		{"conflicting prefix", traceHeaderYAML, "arrival_time_us,input_tokens,output_tokens,prefix_group,prefix_length\n1,2,3,g,8\n2,2,3,g,9\n",
			[]string{"line 3, column prefix_length: 9 conflicts with 8 given for prefix_group \"g\" on line 2"}},
		{"unknown header key", traceHeaderYAML + "colour: red\n", traceCSV,
			[]string{"trace.yaml: colour: line 6: unknown key (allowed: trace_version, time_unit,"}},
		{"bad version", strings.Replace(traceHeaderYAML, "trace_version: 2", "trace_version: 9", 1), traceCSV,
			[]string{"trace.yaml: trace_version: unknown value 9 (allowed: 2, 3)"}},
		{"bad time unit", strings.Replace(traceHeaderYAML, "microseconds", "ms", 1), traceCSV,
			[]string{"trace.yaml: time_unit: unknown value \"ms\" (allowed: microseconds, us)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadTrace(writeTrace(t, tc.header, tc.data), "", 16)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("multi-line error %q", msg)
			}
			for _, want := range tc.want {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q\nlacks %q", msg, want)
				}
			}
		})
	}
}
