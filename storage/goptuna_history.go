package storage

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/c-bata/goptuna"
	rdb "github.com/c-bata/goptuna/rdb.v2"
	"gorm.io/gorm"
)

// samplerStorage is goptuna's rdb.v2 storage with GetAllTrials served
// incrementally. goptuna's own GetAllTrials reads every trial, parameter
// and attribute of the study (and parses every parameter's distribution
// JSON) on each call, and TPE calls it for every proposal: at 10,000
// trials that alone costs over 100 ms. A finished trial (COMPLETE, PRUNED
// or FAIL) never changes again in goptuna (its setters refuse finished
// trials), so it is read once and kept; each call then reads, in five
// queries whatever the study's size, only the trials created since the
// last call and those that were still unfinished then.
type samplerStorage struct {
	*rdb.Storage
	db *gorm.DB

	mu      sync.Mutex
	studies map[int]*trialCache
	// dists holds each distribution JSON parsed once: a study's
	// parameters repeat a handful of distinct strings.
	dists map[string]any
}

// trialCache is one study's trials as last read: finished ones final,
// unfinished ones to be read again.
type trialCache struct {
	trials   []goptuna.FrozenTrial // in trial id order
	index    map[int]int           // trial id → position in trials
	maxID    int                   // highest trial id read
	unsettle []int                 // ids of trials unfinished when last read
}

// maxListedIDs bounds the ids one statement lists (SQLite allows 32,766
// parameters, PostgreSQL 65,535).
const maxListedIDs = 1000

func newSamplerStorage(db *gorm.DB) *samplerStorage {
	return &samplerStorage{Storage: rdb.NewStorage(db), db: db,
		studies: map[int]*trialCache{}, dists: map[string]any{}}
}

// Rows of goptuna's rdb.v2 tables, as far as GetAllTrials reads them.
type (
	gTrial struct {
		ID               int        `gorm:"column:trial_id;primaryKey"`
		Number           int        `gorm:"column:number"`
		StudyID          int        `gorm:"column:study_id"`
		State            string     `gorm:"column:state"`
		Value            float64    `gorm:"column:value"`
		DatetimeStart    *time.Time `gorm:"column:datetime_start"`
		DatetimeComplete *time.Time `gorm:"column:datetime_complete"`
	}
	gParam struct {
		TrialID int     `gorm:"column:trial_id"`
		Name    string  `gorm:"column:param_name"`
		Value   float64 `gorm:"column:param_value"`
		Dist    string  `gorm:"column:distribution_json"`
	}
	gAttr struct {
		TrialID int    `gorm:"column:trial_id"`
		Key     string `gorm:"column:key"`
		Value   string `gorm:"column:value"`
	}
	gStep struct {
		TrialID int     `gorm:"column:trial_id"`
		Step    int     `gorm:"column:step"`
		Value   float64 `gorm:"column:value"`
	}
)

// goptunaStates maps rdb.v2's state column to goptuna's states.
var goptunaStates = map[string]goptuna.TrialState{
	"RUNNING": goptuna.TrialStateRunning, "COMPLETE": goptuna.TrialStateComplete,
	"PRUNED": goptuna.TrialStatePruned, "FAIL": goptuna.TrialStateFail, "WAITING": goptuna.TrialStateWaiting,
}

// GetAllTrials returns the study's trials in id order, as goptuna's does.
// The slice is the caller's; the maps inside the trials are shared and
// must not be written.
func (s *samplerStorage) GetAllTrials(studyID int) ([]goptuna.FrozenTrial, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.studies[studyID]
	if c == nil {
		c = &trialCache{index: map[int]int{}}
		s.studies[studyID] = c
	}
	if err := s.refresh(studyID, c); err != nil {
		return nil, err
	}
	return append([]goptuna.FrozenTrial(nil), c.trials...), nil
}

// refresh reads the trials created since the last call and those that
// were unfinished then.
func (s *samplerStorage) refresh(studyID int, c *trialCache) error {
	// New trials by the primary key's range, then the unfinished ones by
	// id: one condition with OR would make SQLite scan the whole table.
	var rows []gTrial
	if err := s.db.Table("trials").Where("trial_id > ? AND study_id = ?", c.maxID, studyID).
		Order("trial_id").Find(&rows).Error; err != nil {
		return err
	}
	if len(c.unsettle) > 0 {
		var again []gTrial
		if err := s.db.Table("trials").Where("trial_id IN (?)", c.unsettle).Find(&again).Error; err != nil {
			return err
		}
		rows = append(again, rows...) // known ids first: new ones append in order below
	}
	if len(rows) == 0 {
		return nil
	}
	// The other tables are read by trial id: a list when it is short, the
	// study's new trials as a subquery on a first read (too many ids for
	// one statement's parameters).
	var ids any
	if len(rows) <= maxListedIDs {
		list := make([]int, len(rows))
		for i, r := range rows {
			list[i] = r.ID
		}
		ids = list
	} else {
		ids = s.db.Table("trials").Select("trial_id").Where("trial_id > ? AND study_id = ?", c.maxID, studyID).
			Or("trial_id IN (?)", c.unsettle)
	}
	var params []gParam
	var system, user []gAttr
	var steps []gStep
	if err := s.db.Table("trial_params").Where("trial_id IN (?)", ids).Find(&params).Error; err != nil {
		return err
	}
	if err := s.db.Table("trial_system_attributes").Where("trial_id IN (?)", ids).Find(&system).Error; err != nil {
		return err
	}
	if err := s.db.Table("trial_user_attributes").Where("trial_id IN (?)", ids).Find(&user).Error; err != nil {
		return err
	}
	if err := s.db.Table("trial_values").Where("trial_id IN (?)", ids).Find(&steps).Error; err != nil {
		return err
	}
	fresh := make(map[int]*goptuna.FrozenTrial, len(rows))
	c.unsettle = c.unsettle[:0]
	for _, r := range rows {
		state, ok := goptunaStates[r.State]
		if !ok {
			return fmt.Errorf("trial %d: unknown state %q", r.ID, r.State)
		}
		t := goptuna.FrozenTrial{ID: r.ID, StudyID: r.StudyID, Number: r.Number, State: state, Value: r.Value,
			IntermediateValues: map[int]float64{}, InternalParams: map[string]float64{},
			Params: map[string]any{}, Distributions: map[string]any{},
			UserAttrs: map[string]string{}, SystemAttrs: map[string]string{}}
		if r.DatetimeStart != nil {
			t.DatetimeStart = *r.DatetimeStart
		}
		if r.DatetimeComplete != nil {
			t.DatetimeComplete = *r.DatetimeComplete
		}
		if !state.IsFinished() {
			c.unsettle = append(c.unsettle, r.ID)
		}
		c.maxID = max(c.maxID, r.ID)
		if i, ok := c.index[r.ID]; ok {
			c.trials[i] = t
			fresh[r.ID] = &c.trials[i]
			continue
		}
		// Ids grow, and the query returns new trials in id order after
		// the ones already known: appending keeps trials in id order.
		c.index[r.ID] = len(c.trials)
		c.trials = append(c.trials, t)
	}
	for _, r := range rows {
		if _, ok := fresh[r.ID]; !ok {
			fresh[r.ID] = &c.trials[c.index[r.ID]]
		}
	}
	// The later queries may see trials created after the first one: those
	// are read whole next time.
	for _, p := range params {
		t := fresh[p.TrialID]
		if t == nil {
			continue
		}
		d, err := s.distribution(p.Dist)
		if err != nil {
			return fmt.Errorf("trial %d: param %s: %w", p.TrialID, p.Name, err)
		}
		ext, err := goptuna.ToExternalRepresentation(d, p.Value)
		if err != nil {
			return fmt.Errorf("trial %d: param %s: %w", p.TrialID, p.Name, err)
		}
		t.Distributions[p.Name], t.InternalParams[p.Name], t.Params[p.Name] = d, p.Value, ext
	}
	for _, a := range system {
		if t := fresh[a.TrialID]; t != nil {
			t.SystemAttrs[a.Key] = a.Value
		}
	}
	for _, a := range user {
		if t := fresh[a.TrialID]; t != nil {
			t.UserAttrs[a.Key] = a.Value
		}
	}
	for _, v := range steps {
		if t := fresh[v.TrialID]; t != nil {
			t.IntermediateValues[v.Step] = v.Value
		}
	}
	return nil
}

func (s *samplerStorage) distribution(js string) (any, error) {
	if d, ok := s.dists[js]; ok {
		return d, nil
	}
	d, err := goptuna.JSONToDistribution([]byte(js))
	if err != nil {
		return nil, err
	}
	if d == nil {
		return nil, errors.New("no distribution")
	}
	s.dists[js] = d
	return d, nil
}
