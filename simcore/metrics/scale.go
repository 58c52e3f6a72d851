package metrics

// ScaleSummary is what the autoscaler did in a run (Summary.Autoscaler).
type ScaleSummary struct {
	// Replicas is the instance counts over time, a point each time they
	// change: routable (serving), loading, draining.
	Replicas []ReplicaPoint `json:"replicas"`
	// Instances is every instance that existed, in creation order.
	Instances []InstanceLife `json:"instances"`
	// ScaleUps and ScaleDowns count the instances added and drained;
	// FailedScaleUps the instances a decision asked for that could not be
	// placed (no node with free GPUs, max replicas reached).
	ScaleUps       int `json:"scale_ups"`
	ScaleDowns     int `json:"scale_downs"`
	FailedScaleUps int `json:"failed_scale_ups"`
	// MinReplicas is the fewest routable instances the autoscaler kept
	// (0: none, BLIS f90a1e3a's behaviour).
	MinReplicas int `json:"min_replicas"`
	// Roles is, with prefill/decode pools, each pool role's part: its
	// instances added and drained and its GPU-hours (they sum to the
	// run's).
	Roles []RoleScale `json:"roles,omitempty"`
}

// RoleScale is one pool role's part of what the autoscaler did: Role is
// prefill, decode, prefill-decode (an instance in both pools) or none.
type RoleScale struct {
	Role       string  `json:"role"`
	ScaleUps   int     `json:"scale_ups"`
	ScaleDowns int     `json:"scale_downs"`
	GPUHours   float64 `json:"gpu_hours"`
}

// ReplicaPoint is the instance counts from AtMs on; with prefill/decode
// pools also the routable instances of each pool (an instance in both
// counts in both).
type ReplicaPoint struct {
	AtMs     float64 `json:"at_ms"`
	Routable int     `json:"routable"`
	Loading  int     `json:"loading"`
	Draining int     `json:"draining"`
	Prefill  int     `json:"prefill,omitempty"`
	Decode   int     `json:"decode,omitempty"`
}

// InstanceLife is one instance: its name (BLIS's instance ID), its pool
// role with prefill/decode pools (prefill, decode, prefill-decode; ""
// for none), the requests it completed (P/D sub-requests included), and
// when it was placed and terminated (or the run ended).
type InstanceLife struct {
	Name       string  `json:"name"`
	Role       string  `json:"role,omitempty"`
	Completed  int64   `json:"completed"`
	CreatedMs  float64 `json:"created_ms"`
	EndedMs    float64 `json:"ended_ms"`
	Terminated bool    `json:"terminated"`
}
