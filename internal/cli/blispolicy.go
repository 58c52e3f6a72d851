package cli

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"optimize/simcore/cluster"
	"optimize/simcore/keys"
	"optimize/simcore/route"
)

// blisPolicy is BLIS f90a1e3a's --policy-config bundle as simulate reads
// it: the routing policy, the node pools, the instance lifecycle and the
// autoscaler. Its other sections (admission, priority, scheduler,
// preemption, tenant budgets) are not read: given non-empty, they are an
// error naming the flag that sets the same. Unknown keys are errors, as
// in BLIS.
type blisPolicy struct {
	Admission         yaml.Node      `yaml:"admission"`
	Routing           blisRouting    `yaml:"routing"`
	Priority          yaml.Node      `yaml:"priority"`
	Scheduler         yaml.Node      `yaml:"scheduler"`
	Preemption        yaml.Node      `yaml:"preemption"`
	TenantBudgets     yaml.Node      `yaml:"tenant_budgets"`
	NodePools         []blisNodePool `yaml:"node_pools"`
	Autoscaler        blisAutoscaler `yaml:"autoscaler"`
	InstanceLifecycle blisLifecycle  `yaml:"instance_lifecycle"`
}

type blisRouting struct {
	Policy  string    `yaml:"policy"`
	Scorers yaml.Node `yaml:"scorers"`
}

type blisDelay struct {
	Mean   float64 `yaml:"mean"`
	Stddev float64 `yaml:"stddev"`
}

type blisNodePool struct {
	Name              string    `yaml:"name"`
	GPUType           string    `yaml:"gpu_type"`
	GPUsPerNode       int       `yaml:"gpus_per_node"`
	GPUMemoryGiB      float64   `yaml:"gpu_memory_gib"`
	InitialNodes      int       `yaml:"initial_nodes"`
	MinNodes          int       `yaml:"min_nodes"`
	MaxNodes          int       `yaml:"max_nodes"`
	ProvisioningDelay blisDelay `yaml:"provisioning_delay"`
	CostPerHour       float64   `yaml:"cost_per_hour"`
}

type blisLifecycle struct {
	LoadingDelay blisDelay `yaml:"loading_delay"`
	WarmStart    bool      `yaml:"warm_start_initial_instances"`
}

type blisAutoscaler struct {
	IntervalUs        float64   `yaml:"interval_us"`
	ScaleUpWindowUs   float64   `yaml:"scale_up_stabilization_window_us"`
	ScaleDownWindowUs float64   `yaml:"scale_down_stabilization_window_us"`
	HPAScrapeDelay    blisDelay `yaml:"hpa_scrape_delay"`
	Analyzer          struct {
		KVCacheThreshold  float64 `yaml:"kv_cache_threshold"`
		ScaleUpThreshold  float64 `yaml:"scale_up_threshold"`
		ScaleDownBoundary float64 `yaml:"scale_down_boundary"`
		AvgInputTokens    float64 `yaml:"avg_input_tokens"`
	} `yaml:"analyzer"`
}

// readBLISPolicy reads the bundle at path onto c, before the flags, which
// override it (BLIS's order). It returns the notes to print and the keys
// of the settings it set (an error about one names the file).
func readBLISPolicy(path string, c *cluster.Config) (notes, set []string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--policy-config: %v", err)
	}
	var p blisPolicy
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil && err.Error() != "EOF" {
		return nil, nil, fmt.Errorf("--policy-config %s: %v", path, oneLine(err))
	}
	fail := func(section, format string, args ...any) error {
		return fmt.Errorf("--policy-config %s: %s: %s", path, section, fmt.Sprintf(format, args...))
	}
	for _, s := range []struct {
		name, flag string
		node       *yaml.Node
	}{{"admission", "--admission-policy", &p.Admission}, {"priority", "--priority-policy", &p.Priority},
		{"scheduler", "--scheduler", &p.Scheduler}, {"preemption", "--preemption-policy", &p.Preemption},
		{"tenant_budgets", "", &p.TenantBudgets}, {"routing.scorers", "--routing-scorers (llm-d plugin types)", &p.Routing.Scorers}} {
		if !emptyNode(s.node) {
			if s.flag == "" {
				return nil, nil, fail(s.name, "tenant budgets are not modelled")
			}
			return nil, nil, fail(s.name, "not read here: give it as %s", s.flag)
		}
	}
	if p.Routing.Policy != "" {
		if !slices.Contains(route.PolicyNames(), p.Routing.Policy) {
			return nil, nil, fail("routing.policy", "unknown value %q (allowed: %s)", p.Routing.Policy, strings.Join(route.PolicyNames(), ", "))
		}
		c.Routing.Policy = p.Routing.Policy
		set = append(set, keys.RoutingPolicy)
	}
	a := &c.Autoscale
	for _, np := range p.NodePools {
		a.Pools = append(a.Pools, cluster.NodePool{Name: np.Name, GPUType: np.GPUType, GPUsPerNode: np.GPUsPerNode,
			GPUMemoryGiB: np.GPUMemoryGiB, InitialNodes: np.InitialNodes, MinNodes: np.MinNodes, MaxNodes: np.MaxNodes, CostPerHour: np.CostPerHour})
	}
	a.LoadingDelay = cluster.Delay(p.InstanceLifecycle.LoadingDelay)
	a.WarmStart = p.InstanceLifecycle.WarmStart
	set = append(set, keys.AutoscaleLoadingDelay, keys.AutoscaleLoadingDelayStddev)
	as := &p.Autoscaler
	if as.IntervalUs > 0 {
		a.IntervalUs, a.ScaleUpWindowUs, a.ScaleDownWindowUs = as.IntervalUs, as.ScaleUpWindowUs, as.ScaleDownWindowUs
		a.HPADelay = cluster.Delay(as.HPAScrapeDelay)
		a.KVCacheThreshold, a.ScaleUpThreshold = as.Analyzer.KVCacheThreshold, as.Analyzer.ScaleUpThreshold
		a.ScaleDownBoundary, a.AvgInputTokens = as.Analyzer.ScaleDownBoundary, as.Analyzer.AvgInputTokens
		set = append(set, keys.AutoscaleInterval, keys.AutoscaleUpWindow, keys.AutoscaleDownWindow, keys.AutoscaleHPADelay,
			keys.AutoscaleHPADelayStddev, keys.AutoscaleKVThreshold, keys.AutoscaleUpThreshold, keys.AutoscaleDownBoundary, keys.AutoscaleAvgInput)
	} else if *as != (blisAutoscaler{}) {
		notes = append(notes, "--policy-config: autoscaler.interval_us is not > 0, so its other fields are ignored, as BLIS ignores them")
	}
	return notes, set, nil
}

func emptyNode(n *yaml.Node) bool {
	return n.Kind == 0 || n.Kind == yaml.ScalarNode && (n.Tag == "!!null" || n.Value == "") ||
		(n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) && len(n.Content) == 0
}

// oneLine joins a multi-line YAML error into one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", " ")), " ")
}
