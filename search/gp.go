package search

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
)

// A Gaussian process over the search space, for the gp sampler
// (gpsampler.go). Each point is a feature vector: a numeric parameter is
// its position in its range, 0..1 (log-spaced for log-floats, as stored);
// a categorical is its choice's index, and two choices are at distance 1
// whatever they are (Hamming); an inactive parameter sits apart from
// every active value (numeric −0.5, categorical −1), so that the two
// branches of a condition are told apart by the parameters they switch on
// as well as by their condition's choice.
//
// The kernel is Matérn 5/2 with one inverse squared length scale w_d per
// feature (automatic relevance determination):
//
//	k(x, x') = σ² (1 + √5 r + 5/3 r²) exp(−√5 r),  r² = Σ_d w_d Δ_d²
//
// plus noise on the diagonal. The targets are standardised; w, σ² and the
// noise maximise the log marginal likelihood plus log Gamma priors — w_d ~
// Γ(2, rate gpLengthRate) (length scales near a whole range unless the
// data say otherwise), σ² ~ Γ(2, rate 1), noise ~ Γ(1.1, rate 30) above
// 10⁻⁶ —
// by L-BFGS on their logarithms, from the same start every time, so that
// a proposal depends only on the history it models.
type gpModel struct {
	cat   []bool      // per feature: categorical (Hamming distance)
	x     [][]float64 // observed features
	w     []float64   // inverse squared length scales
	amp   float64     // σ²
	noise float64
	chol  mat.Cholesky
	l     mat.TriDense // the Cholesky factor L, K = LLᵀ
	alpha []float64    // K⁻¹ y
}

const (
	// gpLengthRate is the rate of w_d's Gamma(2) prior: its mean 2/rate is
	// w_d = 1, a length scale of the whole range, so that with few trials
	// the process carries a trend across a range instead of a bump around
	// each trial. Measured on joint-slo (sampler seeds 1-10, median best
	// after 25 / 50 / 100 trials, with rank targets): rate 0.5 (w_d near
	// 4) 0.270 / 0.245 / 0.233, rate 1 0.294 / 0.251 / 0.237, rate 2
	// 0.245 / 0.238 / 0.230, rate 4 0.280 / 0.244 / 0.234.
	gpLengthRate    = 2.0
	gpMinNoise      = 1e-6
	gpFitIterations = 60
	gpInactiveNum   = -0.5
	gpInactiveCat   = -1
)

// matern52 is k/σ² at squared distance s, and dk/ds/σ².
func matern52(s float64) (k, dkds float64) {
	r := math.Sqrt(s)
	e := math.Exp(-math.Sqrt(5) * r)
	return (1 + math.Sqrt(5)*r + 5.0/3.0*s) * e, -5.0 / 6.0 * (1 + math.Sqrt(5)*r) * e
}

// sqDist is Σ_d w_d Δ_d² between two feature vectors.
func sqDist(a, b, w []float64, cat []bool) float64 {
	s := 0.0
	for d := range a {
		delta := a[d] - b[d]
		if cat[d] {
			if delta != 0 {
				delta = 1
			}
		}
		s += w[d] * delta * delta
	}
	return s
}

// fitGP fits the model to features x and standardised scores y.
func fitGP(x [][]float64, y []float64, cat []bool) *gpModel {
	dims := len(cat)
	theta := make([]float64, dims+2) // log w..., log σ², log(noise − min)
	for d := range dims {
		theta[d] = math.Log(4)
	}
	theta[dims] = 0
	theta[dims+1] = math.Log(1e-3)
	obj := func(th []float64, grad []float64) float64 {
		v, g := gpNegLogPosterior(x, y, cat, th)
		if grad != nil {
			copy(grad, g)
		}
		return v
	}
	p := optimize.Problem{
		Func: func(th []float64) float64 { return obj(th, nil) },
		Grad: func(grad, th []float64) { obj(th, grad) },
	}
	settings := &optimize.Settings{MajorIterations: gpFitIterations, GradientThreshold: 1e-4}
	if res, err := optimize.Minimize(p, theta, settings, &optimize.LBFGS{}); res != nil && !math.IsInf(res.F, 0) && !math.IsNaN(res.F) {
		_ = err // an iteration limit or a failed line search still leaves the best point found
		theta = res.X
	}
	m := &gpModel{cat: cat, x: x}
	m.setTheta(theta)
	if !m.factor(y) {
		// The fit reached a singular matrix: fall back to the start.
		for d := range dims {
			theta[d] = math.Log(4)
		}
		theta[dims], theta[dims+1] = 0, math.Log(1e-3)
		m.setTheta(theta)
		m.noise = 1e-2
		m.factor(y)
	}
	return m
}

func (m *gpModel) setTheta(th []float64) {
	dims := len(m.cat)
	m.w = make([]float64, dims)
	for d := range dims {
		m.w[d] = math.Exp(clampLog(th[d]))
	}
	m.amp = math.Exp(clampLog(th[dims]))
	m.noise = gpMinNoise + math.Exp(clampLog(th[dims+1]))
}

// clampLog keeps a log-parameter within e^±12 so that the kernel stays
// finite whatever the line search tries.
func clampLog(v float64) float64 { return math.Min(math.Max(v, -12), 12) }

// gram is the covariance matrix of the observations with noise.
func (m *gpModel) gram() *mat.SymDense {
	n := len(m.x)
	k := mat.NewSymDense(n, nil)
	for i := range n {
		for j := 0; j <= i; j++ {
			c, _ := matern52(sqDist(m.x[i], m.x[j], m.w, m.cat))
			c *= m.amp
			if i == j {
				c += m.noise
			}
			k.SetSym(i, j, c)
		}
	}
	return k
}

// factor computes the Cholesky factor and α = K⁻¹y; false if K is not
// positive definite.
func (m *gpModel) factor(y []float64) bool {
	if !m.chol.Factorize(m.gram()) {
		return false
	}
	a := mat.NewVecDense(len(y), nil)
	if err := m.chol.SolveVecTo(a, mat.NewVecDense(len(y), append([]float64(nil), y...))); err != nil {
		return false
	}
	m.alpha = a.RawVector().Data
	m.chol.LTo(&m.l)
	return true
}

// gpNegLogPosterior is −(log marginal likelihood + log prior) at theta,
// and its gradient.
func gpNegLogPosterior(x [][]float64, y []float64, cat []bool, th []float64) (float64, []float64) {
	dims := len(cat)
	n := len(x)
	grad := make([]float64, len(th))
	m := &gpModel{cat: cat, x: x}
	m.setTheta(th)
	if !m.factor(y) {
		return math.Inf(1), grad
	}
	lml := 0.0
	for i, a := range m.alpha {
		lml -= 0.5 * a * y[i]
	}
	lml -= 0.5 * m.chol.LogDet()
	lml -= 0.5 * float64(n) * math.Log(2*math.Pi)
	// B = ααᵀ − K⁻¹; ∂LML/∂θ = ½ Σ_ij B_ij ∂K_ij/∂θ.
	var inv mat.SymDense
	if err := m.chol.InverseTo(&inv); err != nil {
		return math.Inf(1), grad
	}
	for i := range n {
		for j := 0; j <= i; j++ {
			b := m.alpha[i]*m.alpha[j] - inv.At(i, j)
			mult := 1.0
			if i != j {
				mult = 2 // the symmetric pair
			}
			s := sqDist(x[i], x[j], m.w, cat)
			k, dkds := matern52(s)
			grad[dims] += 0.5 * mult * b * m.amp * k
			if i == j {
				grad[dims+1] += 0.5 * b * (m.noise - gpMinNoise)
				continue
			}
			for d := range dims {
				delta := x[i][d] - x[j][d]
				if cat[d] && delta != 0 {
					delta = 1
				}
				grad[d] += 0.5 * mult * b * m.amp * dkds * m.w[d] * delta * delta
			}
		}
	}
	// Log Gamma(a, rate b) priors on w_d, σ² and the noise above its floor,
	// in the log parameters: d/dlog v [(a−1) log v − b v] = (a−1) − b v.
	lp := 0.0
	for d := range dims {
		lp += math.Log(m.w[d]) - gpLengthRate*m.w[d]
		grad[d] += 1 - gpLengthRate*m.w[d]
	}
	lp += math.Log(m.amp) - m.amp
	grad[dims] += 1 - m.amp
	ne := m.noise - gpMinNoise
	lp += 0.1*math.Log(ne) - 30*ne
	grad[dims+1] += 0.1 - 30*ne
	// The clamp in setTheta makes the objective flat outside e^±12.
	for i, v := range th {
		if v < -12 || v > 12 {
			grad[i] = 0
		}
	}
	for i := range grad {
		grad[i] = -grad[i]
	}
	return -(lml + lp), grad
}

// believe returns the model with the points pending added as
// observations of its own mean there (same hyperparameters), so that its
// uncertainty at them vanishes; the model as it was if that fails (a
// pending point on an observed one makes K singular at small noise).
func (m *gpModel) believe(y []float64, pending [][]float64) *gpModel {
	if len(pending) == 0 {
		return m
	}
	b := &gpModel{cat: m.cat, w: m.w, amp: m.amp, noise: m.noise, x: slices.Clone(m.x)}
	yb := slices.Clone(y)
	for _, z := range pending {
		// A point already in the model (another pending trial of the same
		// vector, or a rerun) adds nothing and would make K singular.
		if slices.ContainsFunc(b.x, func(o []float64) bool { return slices.Equal(o, z) }) {
			continue
		}
		mean, _ := m.predict(z)
		b.x = append(b.x, z)
		yb = append(yb, mean)
	}
	if len(b.x) == len(m.x) || !b.factor(yb) {
		return m
	}
	return b
}

// predict is the posterior mean and standard deviation at z.
func (m *gpModel) predict(z []float64) (mean, sd float64) {
	n := len(m.x)
	k := make([]float64, n)
	for i := range n {
		c, _ := matern52(sqDist(z, m.x[i], m.w, m.cat))
		k[i] = m.amp * c
		mean += k[i] * m.alpha[i]
	}
	// var = σ² − kᵀK⁻¹k = σ² − |L⁻¹k|², with L⁻¹k by forward substitution
	// in place. (mat's triangular solve also estimates L's condition
	// number on every call, which cost more than the solve itself; a
	// proposal predicts tens of thousands of points.)
	l := m.l.RawTriangular()
	variance := m.amp
	for i := range n {
		row := l.Data[i*l.Stride : i*l.Stride+i]
		k[i] = (k[i] - floats.Dot(row, k[:i])) / l.Data[i*l.Stride+i]
		variance -= k[i] * k[i]
	}
	return mean, math.Sqrt(math.Max(variance, 1e-12))
}

// logEI is the log expected improvement below best of N(mean, sd²),
// computed in a form that stays finite far into the tail.
func logEI(mean, sd, best float64) float64 {
	g := (best - mean) / sd
	if g > -6 {
		ei := sd * (g*normCDF(g) + normPDF(g))
		return math.Log(math.Max(ei, 1e-300))
	}
	// Mills ratio: EI ≈ sd φ(g)/g² for g → −∞.
	return math.Log(sd) - 0.5*g*g - 0.5*math.Log(2*math.Pi) - 2*math.Log(-g)
}

func normPDF(z float64) float64 { return math.Exp(-0.5*z*z) / math.Sqrt(2*math.Pi) }
