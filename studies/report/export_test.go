package report

// What the external tests (package report_test) need of the package's
// insides.

// ObjectiveRange is objective k's range over the seeds, stored or
// computed.
func (c *Result) ObjectiveRange(k int, metric string) SeedRange { return c.objectiveRange(k, metric) }

// MetricOf reads a metric path.
var MetricOf = metricOf
