package studies

import (
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"optimize/storage"
)

// progress reports trials done, the ETA and the best trial so far: a bar
// on a terminal, one line per trial otherwise (logs, CI).
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	bar   *progressbar.ProgressBar
	row   *storage.Study
	store *storage.Store
	start time.Time
	done0 int // complete trials when this process started
	shown int // complete trials in the last line printed
	// describe says how a trial does on the primary objective.
	describe func(t *storage.Trial) string
}

func newProgress(w io.Writer, row *storage.Study, store *storage.Store, describe func(*storage.Trial) string) *progress {
	p := &progress{w: w, row: row, store: store, start: time.Now(), describe: describe}
	complete, _, _ := store.Counts(row.ID)
	p.done0, p.shown = int(complete), int(complete)
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions(row.TrialsTotal,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(row.Name),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionThrottle(100*time.Millisecond),
		)
		_ = p.bar.Set(p.done0)
	}
	return p
}

// trialDone refreshes the display after a trial finished in this process.
func (p *progress) trialDone() {
	p.mu.Lock()
	defer p.mu.Unlock()
	complete, _, _ := p.store.Counts(p.row.ID)
	if p.bar == nil && int(complete) <= p.shown {
		return // two trials finished together: the count was already shown
	}
	p.shown = int(complete)
	best := p.best()
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("%s · best %s", p.row.Name, best))
		_ = p.bar.Set(int(complete))
		return
	}
	eta := etaText(time.Since(p.start), int(complete)-p.done0, p.row.TrialsTotal-int(complete))
	fmt.Fprintf(p.w, "trial %d/%d done · ETA %s · best %s\n", complete, p.row.TrialsTotal, eta, best)
}

// best describes the lowest-score complete trial.
func (p *progress) best() string {
	t, err := p.store.BestTrial(p.row.ID)
	if err != nil || t == nil {
		return "–"
	}
	return fmt.Sprintf("%s (trial %d)", p.describe(t), t.Number)
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

// maxETA is the longest ETA shown as a duration; beyond it (or before any
// trial finished) the ETA is not worth a figure, and a duration that large
// would overflow time.Duration, which printed negative ETAs.
const maxETA = 1000 * time.Hour

// etaText is the time left at the pace so far: done trials took elapsed,
// left remain.
func etaText(elapsed time.Duration, done, left int) string {
	if done <= 0 {
		return "?"
	}
	if left <= 0 {
		return "0s"
	}
	secs := elapsed.Seconds() / float64(done) * float64(left)
	if math.IsNaN(secs) || secs >= maxETA.Seconds() {
		return fmt.Sprintf("over %dh", int(maxETA.Hours()))
	}
	return time.Duration(secs * float64(time.Second)).Round(100 * time.Millisecond).String()
}
