package simcore

// Ranking orders a WaitQueue for a scheduler whose order changes with time
// only in a way that never reorders requests of one group: within a group
// Less is the serving order at every instant, so each group is a binary
// heap and only the group heads are compared at the current time (Ahead).
// Every operation then costs O(log n + groups), where sorting the whole
// queue at every step cost O(n) a step and O(n²) an overload run.
type Ranking interface {
	// Group returns w's group, a small index ≥ 0 fixed for w's stay.
	Group(w *Waiting) int
	// Less reports whether a, of the same group as b, is served first.
	Less(a, b *Waiting) bool
	// Ahead reports whether head a is served before head b at now.
	Ahead(a, b *Waiting, now Tick) bool
}

// Scorer is a priority policy: the priority of w at now.
type Scorer interface {
	Priority(w *Waiting, now Tick) float64
}

// SetOrder makes the queue serve in rank's order (nil: in queue order,
// front pushes first, then arrivals) and stamp each request it hands out
// with score's priority at the current time (nil: priorities stay as
// set). The queue must be empty.
func (q *WaitQueue) SetOrder(rank Ranking, score Scorer) {
	q.rank, q.score, q.head = rank, score, -1
}

// SetClock sets the time at which the queue ranks and scores requests: the
// start of the step being formed.
func (q *WaitQueue) SetClock(now Tick) {
	if now != q.now && (q.score != nil || q.rank != nil) {
		// The front's priority, and under an ageing order the front
		// itself, were those of an earlier step.
		q.dropFront()
		q.head = -1
	}
	q.now = now
}

// rankedPush adds w to its group's heap.
func (q *WaitQueue) rankedPush(w Waiting) {
	q.dropFront()
	q.head = -1
	g := q.rank.Group(&w)
	for len(q.groups) <= g {
		q.groups = append(q.groups, nil)
	}
	h := append(q.groups[g], w)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !q.rank.Less(&h[i], &h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	q.groups[g] = h
	q.n++
}

// rankedHead returns the record served next: the best of the group heads
// at the current time.
func (q *WaitQueue) rankedHead() *Waiting {
	if q.head < 0 {
		for g, h := range q.groups {
			if len(h) > 0 && (q.head < 0 || q.rank.Ahead(&h[0], &q.groups[q.head][0], q.now)) {
				q.head = g
			}
		}
	}
	return &q.groups[q.head][0]
}

// rankedPop removes the record rankedHead returned.
func (q *WaitQueue) rankedPop() {
	h := q.groups[q.head]
	last := len(h) - 1
	h[0] = h[last]
	h[last] = Waiting{}
	h = h[:last]
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if c+1 < len(h) && q.rank.Less(&h[c+1], &h[c]) {
			c++
		}
		if !q.rank.Less(&h[c], &h[i]) {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	q.groups[q.head] = h
	q.head = -1
	q.n--
}
