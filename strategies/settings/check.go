package settings

import (
	"errors"
	"fmt"

	"optimize/simcore/admit"
	"optimize/simcore/cluster"
	"optimize/simcore/errtext"
)

// CheckConfig runs every check the simulator would make when building c,
// its world resolved in c's world data, so that a bad configuration is
// reported before anything runs; it spells the model and GPU as the data
// does. A value the simulator rejects is an *errtext.Setting naming the
// setting's key; the caller that knows where the value came from (a flag,
// --set, a template parameter) says so in front of it.
func CheckConfig(c *cluster.Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	w, err := c.Resolve()
	if err != nil {
		return err
	}
	c.Model, c.GPU = w.Model, w.GPU
	routing := c.RoutingInEffect()
	if err := routing.Validate(); err != nil {
		return inPart("routing", err)
	}
	if err := c.Priority.Validate(); err != nil {
		return err
	}
	if err := admit.Validate(c.Admission); err != nil {
		return inPart("admission", err)
	}
	return nil
}

// inPart prefixes an error that names no setting (an errtext.Setting
// names its own) with the part of the configuration it is about.
func inPart(part string, err error) error {
	var named *errtext.Setting
	if errors.As(err, &named) {
		return err
	}
	return fmt.Errorf("%s: %w", part, err)
}
