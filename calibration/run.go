package calibration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"optimize/simcore/keys"
	"optimize/simcore/workload"
)

// A Run is a recorded run of a real server: what was sent and when, what
// the server did with each request, and what the run says about the
// server. Two recordings are read:
//   - a BLIS TraceV2 trace of mode real (`blis observe`, `optimize
//     observe`), by its header YAML or the folder holding trace.yaml; a
//     vLLM server_config.json beside it or in the folder above (or given)
//     adds the server's settings;
//   - an inference-perf run: <exp>.csv.gz (index, arrival_time_us,
//     input_tokens, output_tokens, has_error, ttft_us, e2e_us) with its
//     <exp>.meta.json (the server's settings and the model).
type Run struct {
	Name string // the path given
	// Facts are the server's settings the run records, as settings of
	// the simulator: what a replay runs with unless told otherwise.
	Facts []Fact
	Info  workload.RunInfo

	header, data, perf string // TraceV2 header and CSV, or inference-perf CSV
	source             *workload.TraceSource
	blockSize          int
	controls           workload.ReplayOptions
}

// A Fact is a setting of the simulator a run records: Key is the
// settings table's key, Value its text, From where the run records it.
type Fact struct {
	Key, Value, From string
}

// Open reads the run at path; serverConfig, when not "", is a vLLM
// server_config.json for a TraceV2 run (else one beside the header or in
// the folder above is read).
func Open(path, serverConfig string) (*Run, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("run %s: %v", path, err)
	}
	if st.IsDir() {
		path = filepath.Join(path, "trace.yaml")
	}
	r := &Run{Name: path, blockSize: 16}
	switch {
	case strings.HasSuffix(path, ".meta.json"):
		r.perf = strings.TrimSuffix(path, ".meta.json") + ".csv.gz"
		if _, err := os.Stat(r.perf); err != nil {
			r.perf = strings.TrimSuffix(r.perf, ".gz")
		}
		err = r.readMeta(path)
	case strings.HasSuffix(path, ".csv.gz") || strings.HasSuffix(path, ".csv"):
		r.perf = path
		meta := strings.TrimSuffix(strings.TrimSuffix(path, ".gz"), ".csv") + ".meta.json"
		if _, serr := os.Stat(meta); serr == nil {
			err = r.readMeta(meta)
		}
	default:
		r.header = path
		err = r.readServerConfig(serverConfig)
	}
	if err != nil {
		return nil, err
	}
	if _, err := r.load(r.blockSize); err != nil {
		return nil, err
	}
	if r.Info = r.source.Info(); !r.Info.Real {
		return nil, fmt.Errorf("run %s: mode: the trace records no real server (mode real); calibrate compares a real run with the simulator", path)
	}
	r.addHeaderFacts()
	return r, nil
}

// load reads the run's requests for a replay in blocks of blockSize
// tokens (a prefix group's blocks depend on it), once per block size.
func (r *Run) load(blockSize int) (*workload.TraceSource, error) {
	if r.source != nil && r.blockSize == blockSize {
		r.source.Rewind()
		return r.source, nil
	}
	var t *workload.TraceSource
	var err error
	if r.perf != "" {
		t, err = workload.LoadInferencePerf(r.perf, blockSize)
	} else {
		t, err = workload.LoadTrace(r.header, "", blockSize)
	}
	if err != nil {
		return nil, err
	}
	if err := t.Control(r.controls); err != nil {
		return nil, fmt.Errorf("run %s: %v", r.Name, err)
	}
	r.source, r.blockSize = t, blockSize
	return t, nil
}

// Control sets the replay controls every replay of the run takes (a
// window cutting one load stage out, a client cap).
func (r *Run) Control(o workload.ReplayOptions) error {
	r.controls = o
	r.source = nil
	_, err := r.load(r.blockSize)
	return err
}

// Observed lists what the real server did with each request the replay
// sends, in replay order.
func (r *Run) Observed() []workload.Observed { return r.source.Observed() }

// vllmServerConfig is a vLLM server_config.json as the residency runs
// record it (vLLM's engine arguments and its num_gpu_blocks).
type vllmServerConfig struct {
	Model               string `json:"model"`
	TensorParallelSize  int    `json:"tensor_parallel_size"`
	MaxNumBatchedTokens int64  `json:"max_num_batched_tokens"`
	MaxNumSeqs          int    `json:"max_num_seqs"`
	BlockSize           int    `json:"block_size"`
	NumGPUBlocks        int64  `json:"num_gpu_blocks"`
	MaxSeqLen           int64  `json:"max_seq_len"`
}

func (r *Run) readServerConfig(path string) error {
	if path == "" {
		for _, p := range []string{filepath.Join(filepath.Dir(r.header), "server_config.json"), filepath.Join(filepath.Dir(r.header), "..", "server_config.json")} {
			if _, err := os.Stat(p); err == nil {
				path = p
				break
			}
		}
		if path == "" {
			return nil
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--server-config: %v", err)
	}
	var c vllmServerConfig
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	from := filepath.Base(path)
	r.fact(keys.Model, c.Model, from+" model")
	r.fact(keys.TP, itoa(int64(c.TensorParallelSize)), from+" tensor_parallel_size")
	r.fact(keys.MaxScheduledTokens, itoa(c.MaxNumBatchedTokens), from+" max_num_batched_tokens")
	r.fact(keys.MaxRunning, itoa(int64(c.MaxNumSeqs)), from+" max_num_seqs")
	r.fact(keys.KVBlockSize, itoa(int64(c.BlockSize)), from+" block_size")
	r.fact(keys.KVTotalBlocks, itoa(c.NumGPUBlocks), from+" num_gpu_blocks")
	r.fact(keys.MaxModelLen, itoa(c.MaxSeqLen), from+" max_seq_len")
	if c.BlockSize > 0 {
		r.blockSize = c.BlockSize
	}
	return nil
}

// perfMeta is an inference-perf run's <exp>.meta.json.
type perfMeta struct {
	ModelID string `json:"model_id"`
	Config  struct {
		TensorParallelism   int   `json:"tensor_parallelism"`
		MaxNumSeqs          int   `json:"max_num_seqs"`
		MaxNumBatchedTokens int64 `json:"max_num_batched_tokens"`
		KVBlocksTotalGPU    int64 `json:"kv_blocks_total_gpu"`
		BlockSize           int   `json:"block_size"`
	} `json:"config"`
}

func (r *Run) readMeta(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("run %s: %v", path, err)
	}
	var m perfMeta
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	from := filepath.Base(path)
	r.fact(keys.Model, m.ModelID, from+" model_id")
	r.fact(keys.TP, itoa(int64(m.Config.TensorParallelism)), from+" config.tensor_parallelism")
	r.fact(keys.MaxScheduledTokens, itoa(m.Config.MaxNumBatchedTokens), from+" config.max_num_batched_tokens")
	r.fact(keys.MaxRunning, itoa(int64(m.Config.MaxNumSeqs)), from+" config.max_num_seqs")
	r.fact(keys.KVBlockSize, itoa(int64(m.Config.BlockSize)), from+" config.block_size")
	r.fact(keys.KVTotalBlocks, itoa(m.Config.KVBlocksTotalGPU), from+" config.kv_blocks_total_gpu")
	if m.Config.BlockSize > 0 {
		r.blockSize = m.Config.BlockSize
	}
	return nil
}

// addHeaderFacts adds what a TraceV2 header's server section records and
// no server config gave.
func (r *Run) addHeaderFacts() {
	s := r.Info.Server
	r.fact(keys.Model, s.Model, "header server.model")
	r.fact(keys.TP, itoa(int64(s.TensorParallel)), "header server.tensor_parallel")
	r.fact(keys.MaxRunning, itoa(int64(s.MaxNumSeqs)), "header server.max_num_seqs")
	r.fact(keys.KVBlockSize, itoa(int64(s.BlockSize)), "header server.block_size")
	r.fact(keys.MaxModelLen, itoa(s.MaxModelLen), "header server.max_model_len")
	if s.GPUMemoryUtilization > 0 {
		r.fact(keys.GPUMemoryUtilization, strconv.FormatFloat(s.GPUMemoryUtilization, 'g', -1, 64), "header server.gpu_memory_utilization")
	}
}

// fact records a setting the run gives, unless it gives none ("", "0")
// or an earlier source gave it.
func (r *Run) fact(key, value, from string) {
	if value == "" || value == "0" {
		return
	}
	if key == keys.Model {
		value = strings.ToLower(value) // Hugging Face names are case-insensitive; the catalog's are lower case
	}
	for _, f := range r.Facts {
		if f.Key == key {
			return
		}
	}
	r.Facts = append(r.Facts, Fact{Key: key, Value: value, From: from})
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
