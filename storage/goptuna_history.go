package storage

import (
	"errors"
	"fmt"
	"strconv"
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
// trials), so it is read once and kept; each call then reads, in two
// statements whatever the study's size, only the trials created since the
// last call and those that were still unfinished then.
type samplerStorage struct {
	*rdb.Storage
	db    *gorm.DB
	store *Store // its transactions, retried after a lost connection

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

func newSamplerStorage(store *Store) *samplerStorage {
	return &samplerStorage{Storage: rdb.NewStorage(store.DB), db: store.DB, store: store,
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
	// gChild is a row of any of a trial's four child tables, as refresh
	// reads them together: kind p (param: k name, num internal value, txt
	// distribution), s and u (system and user attribute: k key, txt
	// value), v (intermediate value: txt step, num value).
	gChild struct {
		Kind    string  `gorm:"column:kind"`
		TrialID int     `gorm:"column:trial_id"`
		Key     string  `gorm:"column:k"`
		Num     float64 `gorm:"column:num"`
		Text    string  `gorm:"column:txt"`
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
	// New trials by the primary key's range and the unfinished ones by id,
	// in one statement: one condition with OR would make SQLite scan the
	// whole table. Known ids are all below maxID, so nothing comes twice
	// and the known ones come first.
	var rows []gTrial
	err := s.db.Raw("SELECT * FROM trials WHERE trial_id > ? AND study_id = ? UNION ALL "+
		"SELECT * FROM trials WHERE trial_id IN (?) ORDER BY trial_id", c.maxID, studyID, c.unsettle).Scan(&rows).Error
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return nil
	}
	// The other tables are read by trial id, in one statement: a list of
	// ids when it is short, the study's new trials as a subquery on a first
	// read (too many ids for one statement's parameters).
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
	var children []gChild
	err = s.db.Raw(`SELECT 'p' AS kind, trial_id, param_name AS k, param_value AS num, distribution_json AS txt FROM trial_params WHERE trial_id IN (?)
UNION ALL SELECT 's', trial_id, "key", 0, value FROM trial_system_attributes WHERE trial_id IN (?)
UNION ALL SELECT 'u', trial_id, "key", 0, value FROM trial_user_attributes WHERE trial_id IN (?)
UNION ALL SELECT 'v', trial_id, '', value, CAST(step AS TEXT) FROM trial_values WHERE trial_id IN (?)`, ids, ids, ids, ids).
		Scan(&children).Error
	if err != nil {
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
			continue
		}
		// Ids grow, and the query returns new trials in id order after
		// the ones already known: appending keeps trials in id order.
		c.index[r.ID] = len(c.trials)
		c.trials = append(c.trials, t)
	}
	// Pointers only once every append is done (an append may move the
	// array).
	for _, r := range rows {
		fresh[r.ID] = &c.trials[c.index[r.ID]]
	}
	// The second statement may see trials created after the first: those
	// are read whole next time.
	for _, ch := range children {
		t := fresh[ch.TrialID]
		if t == nil {
			continue
		}
		switch ch.Kind {
		case "p":
			d, err := s.distribution(ch.Text)
			if err != nil {
				return fmt.Errorf("trial %d: param %s: %w", ch.TrialID, ch.Key, err)
			}
			ext, err := goptuna.ToExternalRepresentation(d, ch.Num)
			if err != nil {
				return fmt.Errorf("trial %d: param %s: %w", ch.TrialID, ch.Key, err)
			}
			t.Distributions[ch.Key], t.InternalParams[ch.Key], t.Params[ch.Key] = d, ch.Num, ext
		case "s":
			t.SystemAttrs[ch.Key] = ch.Text
		case "u":
			t.UserAttrs[ch.Key] = ch.Text
		case "v":
			step, err := strconv.Atoi(ch.Text)
			if err != nil {
				return fmt.Errorf("trial %d: intermediate value step %q: %w", ch.TrialID, ch.Text, err)
			}
			t.IntermediateValues[step] = ch.Num
		}
	}
	return nil
}

// DeleteStudy is goptuna's, and forgets the study's cached trials. (Ids
// are never reused — AUTOINCREMENT in SQLite, sequences in PostgreSQL —
// so a study deleted by another process leaves a cache nobody asks for,
// never a stale one.)
func (s *samplerStorage) DeleteStudy(studyID int) error {
	s.mu.Lock()
	delete(s.studies, studyID)
	s.mu.Unlock()
	return s.Storage.DeleteStudy(studyID)
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
