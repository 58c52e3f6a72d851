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
}

// ReplicaPoint is the instance counts from AtMs on.
type ReplicaPoint struct {
	AtMs     float64 `json:"at_ms"`
	Routable int     `json:"routable"`
	Loading  int     `json:"loading"`
	Draining int     `json:"draining"`
}

// InstanceLife is one instance: its name (BLIS's instance ID), the
// requests it completed, and when it was placed and terminated (or the
// run ended).
type InstanceLife struct {
	Name       string  `json:"name"`
	Completed  int64   `json:"completed"`
	CreatedMs  float64 `json:"created_ms"`
	EndedMs    float64 `json:"ended_ms"`
	Terminated bool    `json:"terminated"`
}
