package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"optimize/simcore/errtext"
	"optimize/studies"
)

// enqueueRequest is POST /api/studies/NAME/enqueue's body.
type enqueueRequest struct {
	// Params is the vector: parameter name → value (a number, or a
	// categorical's choice as a string; null or absent: inactive), every
	// active parameter given, as `study enqueue --param` takes it.
	Params json.RawMessage `json:"params"`
}

// enqueueAnswer says where the vector waits.
type enqueueAnswer struct {
	Study string `json:"study"`
	// Position is the vector's place in the study's queue (1: the next
	// trial claimed, after any rescue).
	Position int `json:"position"`
	// TrialsTotal is the study's total after it (grown by one when the
	// study had no trial left for the vector).
	TrialsTotal int `json:"trials_total"`
}

// enqueueTrial is `study enqueue`: the vector waits in the study's queue
// and runs as the next trial claimed — at once if the study runs in this
// server, else on POST .../resume or by a worker. 400 naming the
// parameter when the template refuses the vector.
func (s *Server) enqueueTrial(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	row, err := s.cfg.Env.Store.StudyByName(name)
	if err != nil {
		return err
	}
	var req enqueueRequest
	if err := decode(w, r, &req, jsonFields[enqueueRequest]()); err != nil {
		return err
	}
	if len(req.Params) == 0 {
		return withStatus(http.StatusBadRequest, "params: required (an object of parameter name → value)")
	}
	given, err := studies.GivenJSON(req.Params, "name")
	if err != nil {
		return withStatus(http.StatusBadRequest, "params: %v", err)
	}
	q, err := s.cfg.Env.Enqueue(row, given)
	var u errtext.UsageError
	if errors.As(err, &u) {
		return withStatus(http.StatusBadRequest, "params: %v", u.Err)
	}
	if err != nil {
		return err
	}
	return writeValue(w, http.StatusAccepted, enqueueAnswer{Study: row.Name, Position: q.Position, TrialsTotal: q.TrialsTotal})
}
