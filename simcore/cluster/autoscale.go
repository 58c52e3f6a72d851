package cluster

import (
	"fmt"
	"math/rand"

	"optimize/simcore"
	"optimize/simcore/metrics"
	"optimize/simcore/route"
)

// The autoscaler in the engine, as BLIS f90a1e3a runs it. Instances are
// Loading (placed, not serving), Active (routable), Draining (finishing
// the work they have, routed nothing) or Terminated. The first tick is at
// t = 0; each tick reads the routable instances' snapshots (a read that
// refreshes them as routing's does), analyzes them (autoscale_analyze.go),
// passes the decision through its direction's stabilization window and,
// if it passes, schedules its actuation after the HPA's scrape delay. An
// actuation adds instances one by one, first fit on the node pools (each
// loads for a sampled delay, then serves), or drains the "oldest" active
// instances: the smallest names, compared as strings as BLIS compares its
// instance IDs (autoscale-<model>-000001 < instance_0 < instance_10 <
// instance_2). A draining instance terminates, releasing its GPUs, after
// an event of its own leaves it with no queue and no batch. Ticks stop
// when the run has no horizon, no arrival is left and nothing is in
// flight. Where BLIS is degenerate, Config.BLISDegenerate says what is
// done instead; with prefill/decode pools, each pool role is then a scale
// target of its own (autoscale_pd.go).

// lifeState is an instance's lifecycle state.
type lifeState uint8

const (
	stateActive lifeState = iota
	stateLoading
	stateDraining
	stateTerminated
)

// life is what the autoscaler keeps of an instance.
type life struct {
	name         string
	state        lifeState
	added        bool  // by a scale-up (not an initial instance)
	target       uint8 // its scale target, an index in scaler.targets
	node         int32 // node whose GPUs it holds, -1 for none
	tp           int   // the GPUs it holds (or would, without a node)
	created, end simcore.Tick
}

// scaler is the engine's autoscaler.
type scaler struct {
	cfg       *Autoscale
	blis      bool // reproduce BLIS where it is degenerate
	min       int  // routable instances kept, per target
	targets   []target
	acts      []int32  // scratch: a tick's decisions, as actuation slots
	pd        *pdState // prefill/decode pools, nil without
	interval  int64
	params    analyzerParams
	loadRNG   *rand.Rand // "instance-loading": loading delays
	hpaRNG    *rand.Rand // "autoscaler": HPA scrape delays
	model     string
	tp        int
	slots     int     // instances the router was built for
	nodeFree  []int   // free GPUs of each node, pools in order
	lives     []life  // by instance
	members   []int32 // routable instances, ascending
	sub       []route.Snapshot
	kvUsed    []int64 // KV blocks used and total at each instance's last read
	kvTotal   []int64
	reps      []replicaSignal // scratch
	seq       int             // scale-up attempts, for the names of added instances
	counts    [4]int
	series    []metrics.ReplicaPoint
	failed    int // instances a decision asked for that could not be placed
	ups, offs int // instances added, drained
}

// target is what the autoscaler scales as one: every instance, or (P/D,
// outside BLIS's behaviour) the instances of one pool role, as llm-d
// scales each role's Deployment. Each has its own decision, windows,
// bounds and the TP of the instances it adds.
type target struct {
	role     uint8 // the pool bits of the instances it adds
	tp       int
	max      int // placed instances allowed (0 = any)
	up, down stabilizer
}

// routerSlots is how many instances the router is built for: every
// instance that can exist in the run (the autoscaler's added ones included,
// twice the most that fit at once).
func (c *Config) routerSlots() int {
	if !c.Autoscale.On() {
		return c.NumInstances
	}
	return c.NumInstances + 2*c.scaleRoom()
}

// scaleRoom is the most instances placed at once: the node pools' room at
// TP, bounded by MaxReplicas; without pools, MaxReplicas or the initial
// instances (none added under BLIS's behaviour).
func (c *Config) scaleRoom() int {
	a := &c.Autoscale
	if len(a.Pools) == 0 {
		if c.BLISDegenerate() {
			return 0
		}
		if c.PD.Enabled() { // up to four pool roles, each bounded as a whole cluster
			return 4 * max(a.MaxReplicas, c.NumInstances)
		}
		return max(a.MaxReplicas, c.NumInstances)
	}
	room, tp := 0, max(c.TP, 1)
	if c.PD.Enabled() && !c.BLISDegenerate() {
		for _, role := range []uint8{rolePrefill, roleDecode, rolePrefill | roleDecode} {
			tp = min(tp, max(c.PD.tpOf(role, c.TP), 1))
		}
	}
	for _, p := range a.Pools {
		room += p.InitialNodes * (p.GPUsPerNode / tp)
	}
	if a.MaxReplicas > 0 {
		room = min(room, a.MaxReplicas)
	}
	return room
}

func newScaler(e *Engine) (*scaler, error) {
	c := &e.cfg
	a := &c.Autoscale
	if err := route.CheckSubset(c.Routing); err != nil {
		return nil, err
	}
	routers := []route.Router{e.router}
	if e.pd != nil {
		routers = []route.Router{e.pd.decodeRouter, e.pd.prefillRouter}
		for _, sc := range [][]route.ScorerWeight{c.PD.DecodeScorers, c.PD.PrefillScorers} {
			if err := route.CheckSubset(route.Config{Policy: "weighted", Scorers: sc}); sc != nil && err != nil {
				return nil, err
			}
		}
	}
	for _, r := range routers {
		if _, ok := r.(route.Subset); !ok {
			return nil, fmt.Errorf("routing policy %s cannot route while instances come and go", c.Routing.Policy)
		}
	}
	s := &scaler{
		cfg:      a,
		blis:     c.BLISDegenerate(),
		min:      c.MinReplicasInEffect(),
		pd:       e.pd,
		interval: int64(a.IntervalUs),
		params: analyzerParams{kvThreshold: a.KVCacheThresholdInEffect(), upThreshold: a.ScaleUpThresholdInEffect(),
			downBoundary: a.ScaleDownBoundaryInEffect(), avgInput: a.AvgInputTokensInEffect()},
		loadRNG: simcore.SubsystemRNG(c.Seed, "instance-loading"),
		hpaRNG:  simcore.SubsystemRNG(c.Seed, "autoscaler"),
		model:   e.world.Model,
		tp:      max(c.TP, 1),
		slots:   c.routerSlots(),
	}
	for _, p := range a.Pools {
		for range p.InitialNodes {
			s.nodeFree = append(s.nodeFree, p.GPUsPerNode)
		}
	}
	for i := range e.instances {
		t := s.targetOf(c, i)
		s.grow(fmt.Sprintf("instance_%d", i), t)
		if len(a.Pools) > 0 {
			node := s.place(s.lives[i].tp)
			if node < 0 { // checked by Config.Validate
				return nil, fmt.Errorf("instance_%d does not fit the node pools", i)
			}
			s.lives[i].node = int32(node)
		}
	}
	for t := range s.targets {
		tg := &s.targets[t]
		if tg.max = a.MaxReplicas; len(a.Pools) == 0 && !s.blis && tg.max == 0 {
			for i := range s.lives { // without pools, up to the initial instances
				if int(s.lives[i].target) == t {
					tg.max++
				}
			}
		}
	}
	return s, nil
}

// grow adds the autoscaler's record of a new instance of target t,
// Active.
func (s *scaler) grow(name string, t uint8) {
	s.lives = append(s.lives, life{name: name, node: -1, target: t, tp: s.tpOf(t)})
	s.kvUsed = append(s.kvUsed, 0)
	s.kvTotal = append(s.kvTotal, 0)
	s.counts[stateActive]++
}

// place takes tp GPUs of the first node that has them: its index, or -1.
func (s *scaler) place(tp int) int {
	for n, free := range s.nodeFree {
		if free >= tp {
			s.nodeFree[n] -= tp
			return n
		}
	}
	return -1
}

// start runs at t = 0, before the first event: the initial instances on
// node pools load (unless warm-started), and the first tick is scheduled.
func (s *scaler) start(e *Engine) {
	if len(s.cfg.Pools) > 0 && !s.cfg.WarmStart {
		for i := range s.lives {
			s.load(e, i)
		}
	}
	s.resync()
	s.record(e.now)
	e.events.push(event{time: e.now, rank: rankScaleTick, kind: evScaleTick})
}

// load starts instance i loading for a sampled delay; with none it
// serves at once.
func (s *scaler) load(e *Engine, i int) {
	delay := sampleDelay(s.cfg.LoadingDelay, s.loadRNG.NormFloat64)
	if delay == 0 {
		return
	}
	s.move(i, stateLoading)
	e.events.push(event{time: e.now + delay, rank: rankInstanceLoaded, kind: evInstanceLoaded, slot: int32(i)})
}

// move changes instance i's state, keeping the counts and the routable
// list.
func (s *scaler) move(i int, to lifeState) {
	l := &s.lives[i]
	s.counts[l.state]--
	s.counts[to]++
	l.state = to
	s.resync()
}

// resync lists the routable instances again, and the pools' members.
func (s *scaler) resync() {
	s.members = s.members[:0]
	for k := range s.lives {
		if s.lives[k].state == stateActive {
			s.members = append(s.members, int32(k))
		}
	}
	if s.pd != nil {
		s.pd.setMembers(s.members)
	}
}

// handle runs an autoscaler event.
func (s *scaler) handle(e *Engine, ev event) {
	switch ev.kind {
	case evScaleTick:
		s.tick(e)
	case evScaleActuate:
		s.actuate(e, ev.slot)
	case evInstanceLoaded:
		if s.lives[ev.slot].state == stateLoading {
			s.move(int(ev.slot), stateActive)
		}
	}
	s.record(e.now)
}

// refresh re-reads the routable instances' signals (refreshSnapshots'
// rule, for them alone) and gathers their snapshots for admission and
// routing.
func (s *scaler) refresh(e *Engine) {
	s.sub = s.sub[:0]
	for _, id := range s.members {
		inst, snap := e.instances[id], &e.snaps[id]
		snap.InFlight, snap.InFlightTokens = inst.inFlight, inst.inFlightTokens
		if iv := e.cfg.SnapshotRefresh; iv <= 0 || e.now-e.refreshed[id] >= iv {
			e.refreshed[id] = e.now
			inst.fillSnapshot(snap)
			s.kvUsed[id], s.kvTotal[id] = inst.kv.Used(), inst.kv.Total()
		}
		s.sub = append(s.sub, *snap)
	}
	e.load.Instances = s.sub
}

// pick routes r among the routable instances: the chosen instance, or -1
// when none is routable (the request is rejected, as BLIS rejects it).
func (s *scaler) pick(e *Engine, r *simcore.Request) int {
	if len(s.members) == 0 {
		return -1
	}
	// The snapshots as they are now: a request routed since the last read
	// changed its instance's in-flight counts.
	s.sub = s.sub[:0]
	for _, id := range s.members {
		s.sub = append(s.sub, e.snaps[id])
	}
	k := e.router.(route.Subset).RouteAmong(r, s.sub, s.members, e.now)
	return int(s.members[k])
}

// tick analyzes each target's routable instances and schedules the
// decisions that pass their windows, all after one HPA delay; then the
// next tick.
func (s *scaler) tick(e *Engine) {
	e.refreshSnapshots()
	bs := e.cfg.BlockSize
	s.acts = s.acts[:0]
	for t := range s.targets {
		tg := &s.targets[t]
		s.reps = s.reps[:0]
		for _, id := range s.members {
			if int(s.lives[id].target) == t {
				s.reps = append(s.reps, replicaSignal{capacityTokens: s.kvTotal[id] * bs, tokensInUse: s.kvUsed[id] * bs, queue: e.snaps[id].QueueDepth})
			}
		}
		var pending int64
		for i := range s.lives {
			if s.lives[i].state == stateLoading && int(s.lives[i].target) == t {
				pending += e.instances[i].kv.Total() * bs
			}
		}
		a := analyze(s.reps, pending, s.params)
		d := a.delta()
		upOK := tg.up.pass(d > 0, e.now, s.cfg.ScaleUpWindowUs)
		downOK := tg.down.pass(d < 0, e.now, s.cfg.ScaleDownWindowUs)
		if upOK || downOK {
			s.acts = append(s.acts, int32(d)<<2|int32(t)) // the target in the low 2 bits
		}
	}
	if len(s.acts) > 0 {
		delay := sampleDelay(s.cfg.HPADelay, s.hpaRNG.NormFloat64)
		for _, slot := range s.acts {
			e.events.push(event{time: e.now + delay, rank: rankScaleActuate, kind: evScaleActuate, slot: slot})
		}
	}
	if _, arrivals := e.src.Peek(); e.cfg.Horizon == 0 && !arrivals && s.inFlight(e) == 0 {
		return
	}
	e.events.push(event{time: e.now + s.interval, rank: rankScaleTick, kind: evScaleTick})
}

func (s *scaler) inFlight(e *Engine) int64 {
	var n int64
	for _, inst := range e.instances {
		n += int64(inst.inFlight)
	}
	if s.pd != nil && !s.blis { // split requests between their prefill and their decode queue
		for _, a := range s.pd.awaiting {
			n += int64(a)
		}
	}
	return n
}

// actuate applies a decision: slot holds the instances to add (> 0) or
// drain (< 0) and, in its low 2 bits, the target.
func (s *scaler) actuate(e *Engine, slot int32) {
	delta, t := int(slot>>2), int(slot&3)
	for ; delta > 0; delta-- {
		s.seq++
		if err := s.scaleUp(e, t); err != nil {
			s.failed++
		}
	}
	for ; delta < 0; delta++ {
		if !s.blis && s.count(t, stateActive) <= s.min {
			return // minReplicas: the rest of the decision is not applied
		}
		i := s.oldestActive(t)
		if i < 0 {
			return
		}
		s.offs++
		s.move(i, stateDraining)
		if !s.blis {
			s.finishDrain(e, i) // an idle instance terminates at once
		}
	}
}

// count is how many instances of target t are in state st.
func (s *scaler) count(t int, st lifeState) int {
	if len(s.targets) == 1 {
		return s.counts[st]
	}
	n := 0
	for i := range s.lives {
		if int(s.lives[i].target) == t && s.lives[i].state == st {
			n++
		}
	}
	return n
}

// scaleUp places one instance of target t and starts it loading.
func (s *scaler) scaleUp(e *Engine, t int) error {
	tg := &s.targets[t]
	if tg.max > 0 && s.count(t, stateActive)+s.count(t, stateLoading) >= tg.max {
		return fmt.Errorf("at max replicas")
	}
	node := -1
	if len(s.cfg.Pools) > 0 {
		if node = s.place(tg.tp); node < 0 {
			return fmt.Errorf("no node has %d free GPUs", tg.tp)
		}
	} else if s.blis {
		return fmt.Errorf("no node pool")
	}
	if len(e.instances) >= s.slots {
		if node >= 0 {
			s.nodeFree[node] += tg.tp
		}
		return fmt.Errorf("instance slots exhausted")
	}
	var inst *instance
	var err error
	if e.pd != nil {
		inst, err = e.addPDInstance(tg.role)
	} else {
		inst, err = e.addInstance()
	}
	if err != nil {
		return err
	}
	inst.clock = e.now
	i := len(e.instances) - 1
	s.grow(s.addedName(tg.role), uint8(t))
	s.lives[i].node, s.lives[i].created, s.lives[i].added = int32(node), e.now, true
	s.resync()
	s.ups++
	s.load(e, i)
	return nil
}

// oldestActive is the active instance of target t of the smallest name,
// or -1.
func (s *scaler) oldestActive(t int) int {
	best := -1
	for _, i := range s.members {
		if int(s.lives[i].target) == t && (best < 0 || s.lives[i].name < s.lives[best].name) {
			best = int(i)
		}
	}
	return best
}

// afterInstanceEvent terminates instance i if it is draining and has no
// queue and no batch left.
func (s *scaler) afterInstanceEvent(e *Engine, i int) {
	if s.lives[i].state == stateDraining {
		s.finishDrain(e, i)
		s.record(e.now)
	}
}

// finishDrain terminates draining instance i if it has no work: BLIS
// looks at its queue and batch alone; otherwise nothing may be routed to
// it and not done (a request on its way to its queue included).
func (s *scaler) finishDrain(e *Engine, i int) {
	inst := e.instances[i]
	if s.blis && (inst.wait.Len() > 0 || len(inst.running) > 0) || !s.blis && (inst.inFlight > 0 || s.pd != nil && s.pd.awaiting[i] > 0) {
		return
	}
	s.move(i, stateTerminated)
	l := &s.lives[i]
	l.end = e.now
	if l.node >= 0 {
		s.nodeFree[l.node] += l.tp
	}
}

// record appends the replica counts at now when they changed.
func (s *scaler) record(now simcore.Tick) {
	p := metrics.ReplicaPoint{AtMs: float64(now) / 1000, Routable: s.counts[stateActive], Loading: s.counts[stateLoading], Draining: s.counts[stateDraining]}
	if s.pd != nil {
		p.Prefill, p.Decode = len(s.pd.prefillIDs), len(s.pd.decodeIDs)
	}
	if n := len(s.series); n > 0 {
		last := s.series[n-1]
		same := last
		if same.AtMs = p.AtMs; same == p { // no count changed
			return
		}
		if last.AtMs == p.AtMs {
			s.series[n-1] = p
			return
		}
	}
	s.series = append(s.series, p)
}

// summarize is the run's summary with the autoscaler's: the replica
// counts over time, each instance's life, and GPU-hours from each
// instance's placement to its termination or the end of the run (by pool
// role too, with P/D); the cost follows the GPU-hours (gpu_count and
// cost_per_hour are their means over the run).
func (s *scaler) summarize(e *Engine, info metrics.RunInfo) metrics.Summary {
	end := max(info.Makespan, e.now)
	if e.cfg.Horizon > 0 {
		end = min(end, e.cfg.Horizon)
	}
	out := &metrics.ScaleSummary{Replicas: s.series, ScaleUps: s.ups, ScaleDowns: s.offs, FailedScaleUps: s.failed, MinReplicas: s.min}
	var gpuUs float64
	roles := s.roleRows()
	for i, l := range s.lives {
		stop := end
		if l.state == stateTerminated {
			stop = l.end
		}
		if stop < l.created {
			stop = l.created
		}
		us := float64(l.tp) * float64(stop-l.created)
		gpuUs += us
		life := metrics.InstanceLife{Name: l.name, Completed: e.instances[i].completed,
			CreatedMs: float64(l.created) / 1000, EndedMs: float64(stop) / 1000, Terminated: l.state == stateTerminated}
		if s.pd != nil {
			life.Role = roleName(s.pd.roles[i])
			s.countRole(roles, s.pd.roles[i], l, us)
		}
		out.Instances = append(out.Instances, life)
	}
	out.Roles = roles
	info.GPUHours, info.RunHours = gpuUs/3.6e9, float64(end)/3.6e9
	sum := e.metrics.Summarize(info)
	sum.Autoscaler = out
	return sum
}
