package cli

// blisDo is what simulate does with a flag of `blis run`.
type blisDo int

const (
	// blisOurs: simulate has the flag under BLIS's name, with BLIS's meaning.
	blisOurs blisDo = iota
	// blisAlias: another BLIS name of one of our flags (target).
	blisAlias
	// blisDiffers: simulate has a flag of that name whose meaning differs
	// from BLIS's (reason says how).
	blisDiffers
	// blisIgnored: read and ignored with a one-line note on stderr; it
	// changes no simulated number (output files, logs, BLIS's data paths).
	blisIgnored
	// blisWorkloadOnly: BLIS reads it only to synthesise a workload when no
	// --workload-spec is given; beside --workload-spec or --trace it is
	// ignored with a note (BLIS ignores it there too), without one it is
	// rejected as blisRejected is.
	blisWorkloadOnly
	// blisDistribution: a parameter of BLIS's distribution workload
	// (--workload distribution, its default), which simulate synthesises
	// as BLIS does when no workload is named (blisdistribution.go); beside
	// --workload-spec or --trace it is ignored with a note, as BLIS
	// ignores it there.
	blisDistribution
	// blisRejected: a mechanism this simulator does not model; a one-line
	// error, unless the value restates BLIS's default (def), which leaves
	// the mechanism off as it is here.
	blisRejected
)

// blisFlag is one flag of `blis run` at BLIS 7fd7a88d or f90a1e3a.
type blisFlag struct {
	name string
	// in is the BLIS commit(s) whose `blis run` has the flag.
	in     string
	do     blisDo
	target string // blisAlias: our flag
	// def is BLIS's default, the value that restates it (blisRejected,
	// blisWorkloadOnly); numbers compare as numbers.
	def string
	// boolean flags take no value ("--flow-control" means true).
	boolean bool
	reason  string
}

const (
	blisOld  = "7fd7a88d"
	blisNew  = "f90a1e3a"
	blisBoth = "7fd7a88d, f90a1e3a"
)

// Reasons shared by several flags.
const (
	whySynthesis    = "BLIS's distribution workload: one client at --rate, constant arrivals, gaussian prompt and output lengths, a shared prefix of --prefix-tokens"
	whyDistribution = "BLIS's closed-loop (concurrency) workload is not built in: give --rate, or write the workload as a --workload-spec"
	whyPD           = "a pool's own hardware, latency model or context window is not modelled (its TP is: --prefill-tp, --decode-tp)"
	whyLoRA         = "LoRA adapters are not modelled"
	whyMoE          = "data and expert parallelism of MoE models is not modelled"
	whyEncode       = "the multimodal encode pool is not modelled"
	whySaturation   = "saturation traces and reports are not written (no effect on the simulated numbers)"
	whyTraceLevel   = "decision traces are not written (no effect on the simulated numbers)"
)

// blisFlags is every flag of `blis run` at BLIS 7fd7a88d and f90a1e3a
// (cmd/root.go; f90a1e3a also cmd/saturation.go), in name order. The
// flags are bound, checked and listed in the README from it.
var blisFlags = []blisFlag{
	{name: "admission-latency", in: blisBoth, do: blisRejected, def: "0", reason: "a fixed admission delay is not modelled"},
	{name: "admission-policy", in: blisBoth, do: blisOurs},
	{name: "alpha-coeffs", in: blisBoth, do: blisOurs, reason: "7fd7a88d's blackbox α (three values); f90a1e3a's trained-physics coefficient vectors are not read"},
	{name: "beta-coeffs", in: blisBoth, do: blisOurs, reason: "7fd7a88d's blackbox β (three values); f90a1e3a's trained-physics coefficient vectors are not read"},
	{name: "block-size-in-tokens", in: blisBoth, do: blisOurs},
	{name: "cache-signal-delay", in: blisNew, do: blisOurs},
	{name: "concurrency", in: blisNew, do: blisWorkloadOnly, def: "0", reason: whyDistribution},
	{name: "counterfactual-k", in: blisBoth, do: blisIgnored, reason: whyTraceLevel},
	{name: "decode-hardware", in: blisNew, do: blisRejected, def: "", reason: whyPD},
	{name: "decode-instances", in: blisNew, do: blisOurs},
	{name: "decode-latency-model", in: blisNew, do: blisRejected, def: "", reason: whyPD},
	{name: "decode-max-model-len", in: blisNew, do: blisRejected, def: "0", reason: whyPD},
	{name: "decode-routing-scorers", in: blisNew, do: blisOurs, reason: "name:weight,... as --routing-scorers: the decode pool's own weighted policy (on the decode-router stream)"},
	{name: "decode-tp", in: blisNew, do: blisOurs},
	{name: "defaults-filepath", in: blisBoth, do: blisIgnored, reason: "the models, GPUs and latency profiles are built in (data/models, data/hardware, data/latency)"},
	{name: "detectors", in: blisNew, do: blisIgnored, reason: whySaturation},
	{name: "dispatch-order", in: blisNew, do: blisOurs},
	{name: "dispatch-tick-interval", in: blisNew, do: blisOurs},
	{name: "dp", in: blisNew, do: blisRejected, def: "1", reason: whyMoE},
	{name: "enable-expert-parallel", in: blisNew, do: blisRejected, def: "false", boolean: true, reason: whyMoE},
	{name: "encode-decider", in: blisNew, do: blisRejected, def: "never", reason: whyEncode},
	{name: "encode-instances", in: blisNew, do: blisRejected, def: "0", reason: whyEncode},
	{name: "fairness-policy", in: blisNew, do: blisOurs},
	{name: "fitness-weights", in: blisBoth, do: blisIgnored, reason: "no fitness score is printed; a study's objectives score runs"},
	{name: "flow-control", in: blisNew, do: blisOurs},
	{name: "gpu-memory-utilization", in: blisNew, do: blisOurs},
	{name: "hardware", in: blisBoth, do: blisOurs},
	{name: "hardware-config", in: blisBoth, do: blisDiffers, reason: "ours reads a YAML file holding one GPU (like data/hardware/gpus.yaml) instead of --hardware; BLIS reads a JSON file of GPUs by name, --hardware choosing one"},
	{name: "horizon", in: blisBoth, do: blisOurs, reason: "µs; 0 = until every request is done (BLIS's default, the largest int64)"},
	{name: "in-flight-eviction", in: blisNew, do: blisOurs},
	{name: "kv-cache-util-threshold", in: blisNew, do: blisOurs},
	{name: "kv-cpu-blocks", in: blisBoth, do: blisOurs},
	{name: "kv-offload-config", in: blisNew, do: blisRejected, def: "", reason: "multi-tier offload files are not read: the CPU tier is --kv-cpu-blocks and its --kv-* flags"},
	{name: "kv-offload-threshold", in: blisBoth, do: blisOurs},
	{name: "kv-transfer-bandwidth", in: blisBoth, do: blisOurs},
	{name: "kv-transfer-base-latency", in: blisBoth, do: blisOurs},
	{name: "latency-model", in: blisBoth, do: blisOurs, reason: "blackbox, trained-physics or roofline; 7fd7a88d's crossmodel and trained-roofline are not built in"},
	{name: "lazy-generation", in: blisNew, do: blisIgnored, boolean: true, reason: "BLIS streams the same requests with it; the numbers do not change"},
	{name: "log", in: blisBoth, do: blisIgnored, reason: "simulate logs nothing; errors and notes go to stderr"},
	{name: "long-prefill-token-threshold", in: blisBoth, do: blisOurs},
	{name: "lora-adapter-capacity", in: blisNew, do: blisRejected, def: "0", reason: whyLoRA},
	{name: "lora-config", in: blisNew, do: blisRejected, def: "", reason: whyLoRA},
	{name: "lora-footprint-bytes-per-rank", in: blisNew, do: blisRejected, def: "0", reason: whyLoRA},
	{name: "lora-load-bandwidth-bytes-us", in: blisNew, do: blisRejected, def: "0", reason: whyLoRA},
	{name: "lora-load-base-latency-us", in: blisNew, do: blisRejected, def: "0", reason: whyLoRA},
	{name: "lora-scorer-weight", in: blisNew, do: blisRejected, def: "0", reason: whyLoRA},
	{name: "max-concurrency", in: blisNew, do: blisOurs},
	{name: "max-gateway-queue-depth", in: blisNew, do: blisOurs},
	{name: "max-model-len", in: blisBoth, do: blisOurs},
	{name: "max-num-batched-tokens", in: blisNew, do: blisAlias, target: "max-num-scheduled-tokens", reason: "f90a1e3a's vLLM name"},
	{name: "max-num-running-reqs", in: blisBoth, do: blisOurs},
	{name: "max-num-scheduled-tokens", in: blisBoth, do: blisOurs},
	{name: "max-num-seqs", in: blisNew, do: blisAlias, target: "max-num-running-reqs", reason: "f90a1e3a's vLLM name"},
	{name: "metrics-path", in: blisNew, do: blisIgnored, reason: "no metrics file is written: --output json prints the summary"},
	{name: "model", in: blisBoth, do: blisOurs},
	{name: "model-autoscaler-interval-us", in: blisNew, do: blisOurs, reason: "BLIS's model autoscaler; with --era f90a1e3a exactly BLIS's, otherwise at least autoscaler.min_replicas (1) stay routable, an idle drained instance terminates at once and, with P/D, each pool role is scaled on its own"},
	{name: "model-config-folder", in: blisBoth, do: blisRejected, def: "", reason: "give the folder's config.json as --model-config instead of --model (built-in models carry their own)"},
	{name: "moe-comm-backend", in: blisNew, do: blisRejected, def: "", reason: whyMoE},
	{name: "num-instances", in: blisBoth, do: blisOurs},
	{name: "num-requests", in: blisBoth, do: blisOurs, reason: "given, it caps the workload's requests as in BLIS"},
	{name: "output-tokens", in: blisBoth, do: blisDistribution, def: "512", reason: whySynthesis},
	{name: "output-tokens-max", in: blisBoth, do: blisDistribution, def: "7000", reason: whySynthesis},
	{name: "output-tokens-min", in: blisBoth, do: blisDistribution, def: "2", reason: whySynthesis},
	{name: "output-tokens-stdev", in: blisBoth, do: blisDistribution, def: "256", reason: whySynthesis},
	{name: "pd-decider", in: blisNew, do: blisOurs},
	{name: "pd-prefix-threshold", in: blisNew, do: blisOurs},
	{name: "pd-transfer-bandwidth", in: blisNew, do: blisOurs},
	{name: "pd-transfer-base-latency", in: blisNew, do: blisOurs},
	{name: "pd-transfer-contention", in: blisNew, do: blisOurs},
	{name: "per-band-capacity", in: blisNew, do: blisOurs},
	{name: "policy-config", in: blisBoth, do: blisOurs, reason: "its routing.policy, node_pools, instance_lifecycle and autoscaler sections are read (flags given too override them, as in BLIS); a non-empty admission, priority, scheduler, preemption, tenant_budgets or routing.scorers section is an error naming the flag to use"},
	{name: "preemption-policy", in: blisNew, do: blisOurs},
	{name: "prefill-decode-instances", in: blisNew, do: blisOurs},
	{name: "prefill-hardware", in: blisNew, do: blisRejected, def: "", reason: whyPD},
	{name: "prefill-instances", in: blisNew, do: blisOurs},
	{name: "prefill-latency-model", in: blisNew, do: blisRejected, def: "", reason: whyPD},
	{name: "prefill-max-model-len", in: blisNew, do: blisRejected, def: "0", reason: whyPD},
	{name: "prefill-routing-scorers", in: blisNew, do: blisOurs, reason: "name:weight,... as --routing-scorers: the prefill pool's own weighted policy (on the prefill-router stream)"},
	{name: "prefill-tp", in: blisNew, do: blisOurs},
	{name: "prefix-tokens", in: blisBoth, do: blisDistribution, def: "0", reason: whySynthesis},
	{name: "priority-policy", in: blisOld, do: blisOurs},
	{name: "prompt-tokens", in: blisBoth, do: blisDistribution, def: "512", reason: whySynthesis},
	{name: "prompt-tokens-max", in: blisBoth, do: blisDistribution, def: "7000", reason: whySynthesis},
	{name: "prompt-tokens-min", in: blisBoth, do: blisDistribution, def: "2", reason: whySynthesis},
	{name: "prompt-tokens-stdev", in: blisBoth, do: blisDistribution, def: "256", reason: whySynthesis},
	{name: "queue-depth-threshold", in: blisNew, do: blisOurs},
	{name: "queue-shedding", in: blisNew, do: blisOurs},
	{name: "rate", in: blisBoth, do: blisDistribution, def: "1", reason: whySynthesis},
	{name: "request-ttl", in: blisNew, do: blisOurs},
	{name: "results-path", in: blisOld, do: blisIgnored, reason: "BLIS's per-request JSON is not written: --requests-out writes each request as CSV or JSONL; the summary goes to stdout"},
	{name: "routing-latency", in: blisBoth, do: blisRejected, def: "0", reason: "a fixed routing delay is not modelled"},
	{name: "routing-policy", in: blisBoth, do: blisOurs, reason: "round-robin, least-loaded or weighted; always-busiest is not built in"},
	{name: "routing-scorers", in: blisBoth, do: blisOurs, reason: "7fd7a88d's scorers, ours, and llm-d's by plugin type (queue-scorer, no-hit-lru-scorer, …); f90a1e3a's short names for them (no-hit-lru, active-requests, …) are not accepted: name the llm-d plugin type"},
	{name: "saturation-config", in: blisNew, do: blisIgnored, reason: whySaturation},
	{name: "saturation-detector", in: blisNew, do: blisOurs, reason: "BLIS's default, never (llm-d's is utilization-detector), is kept"},
	{name: "saturation-final-window", in: blisNew, do: blisIgnored, reason: whySaturation},
	{name: "saturation-report", in: blisNew, do: blisIgnored, reason: whySaturation},
	{name: "scheduler", in: blisBoth, do: blisOurs, reason: "fcfs, priority-fcfs, sjf and ours; reverse-priority is not built in"},
	{name: "seed", in: blisBoth, do: blisOurs},
	{name: "slo-e2e", in: blisNew, do: blisOurs, reason: "class=duration,... (critical=5s); a bare number is ms"},
	{name: "slo-itl", in: blisNew, do: blisOurs, reason: "class=duration,... (critical=50ms); a bare number is ms"},
	{name: "slo-targets", in: blisNew, do: blisOurs, reason: "class=µs,... (critical=100000)"},
	{name: "slo-ttft", in: blisNew, do: blisOurs, reason: "class=duration,... (critical=100ms,standard=500ms); a bare number is ms"},
	{name: "snapshot-refresh-interval", in: blisBoth, do: blisOurs, reason: "µs; default as BLIS's, by era: 50000 in f90a1e3a's (the physics latency models), 0 (always fresh) in 7fd7a88d's"},
	{name: "summarize-trace", in: blisBoth, do: blisIgnored, boolean: true, reason: whyTraceLevel},
	{name: "think-time-ms", in: blisNew, do: blisWorkloadOnly, def: "0", reason: whyDistribution},
	{name: "timeout", in: blisNew, do: blisRejected, def: "300", reason: "no request deadline is modelled"},
	{name: "token-bucket-capacity", in: blisBoth, do: blisOurs},
	{name: "token-bucket-refill-rate", in: blisBoth, do: blisOurs},
	{name: "total-kv-blocks", in: blisBoth, do: blisOurs},
	{name: "tp", in: blisBoth, do: blisOurs},
	{name: "trace-level", in: blisBoth, do: blisIgnored, reason: whyTraceLevel},
	{name: "trace-output", in: blisNew, do: blisIgnored, reason: "the workload is not exported as a TraceV2 trace"},
	{name: "usage-limit-threshold", in: blisNew, do: blisOurs},
	{name: "vllm-version", in: blisOld, do: blisIgnored, reason: "it picks a coefficient set of BLIS's defaults.yaml; ours has one blackbox profile per model, GPU and TP, whose vLLM version data/models records"},
	{name: "workload", in: blisBoth, do: blisDiffers, reason: "ours names a built-in workload (NAME or NAME@REGIME); BLIS's presets are not built in. BLIS's default, distribution, is synthesised from --rate, --prompt-tokens… and --output-tokens… as BLIS does; beside --workload-spec it is ignored as BLIS ignores it"},
	{name: "workload-spec", in: blisBoth, do: blisOurs},
	{name: "workload-traces-filepath", in: blisOld, do: blisRejected, def: "", reason: "7fd7a88d's CSV traces workload: replay traces with --trace"},
}
