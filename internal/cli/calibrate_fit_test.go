package cli

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"optimize/calibration"
	"optimize/internal/testkit"
	"optimize/strategies/settings"
)

// calibrate --fit moves the trained-physics coefficients, within their
// physical bounds, until the three shared Qwen3-14B runs (their first
// 120 s: 2,640 requests) come out right: each run's TTFT mean, E2E mean
// and E2E P90 within 10 % of the real ones, against −42 % to −77 %
// before. The leave-one-run-out errors are reported beside them and
// written with the world, which --world-file then runs calibrate in to
// the same errors.
func TestCalibrateFitBringsTheQwenRunsWithinTenPercent(t *testing.T) {
	a := testkit.SharedData(t, "sim2real/A")
	runs := []string{filepath.Join(a, "sweep_rate_agg_2rps"), filepath.Join(a, "sweep_rate_agg_8rps"), filepath.Join(a, "w5_sweep_agg12")}
	world := filepath.Join(t.TempDir(), "qwen-h100.yaml")
	window := []string{"--hardware", "H100", "--trace-window", "0s-120s"}
	code, stdout, stderr := run(t, append(append([]string{"calibrate", "--fit", "-o", world, "--fit-evaluations", "300"}, runs...), window...)...)
	if code != 0 {
		t.Fatal(stderr)
	}
	if !strings.Contains(stdout, "held out") || !strings.Contains(stdout, "latency.physics.beta.1a") {
		t.Errorf("the fit's report lacks its coefficients or the hold-out:\n%s", stdout)
	}
	data, err := os.ReadFile(world)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		World      map[string]float64 `yaml:"-"`
		Provenance struct {
			Runs     []string               `yaml:"runs"`
			FitError []calibration.RunError `yaml:"fit_error"`
			HeldOut  []calibration.RunError `yaml:"held_out_error"`
		} `yaml:"provenance"`
	}
	if err := yaml.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	p := file.Provenance
	if len(p.Runs) != 3 || len(p.FitError) != 3 || len(p.HeldOut) != 3 {
		t.Fatalf("provenance %+v", p)
	}
	for _, e := range p.FitError {
		for name, v := range map[string]float64{"TTFT mean": e.TTFTMean, "E2E mean": e.E2EMean, "E2E P90": e.E2EP90} {
			if math.Abs(v) > 0.10 {
				t.Errorf("%s: fitted %s error %+.1f %%, want within 10 %%", e.Run, name, 100*v)
			}
		}
	}
	var coeffs map[string]map[string]any
	if err := yaml.Unmarshal(data, &coeffs); err != nil {
		t.Fatal(err)
	}
	for key, floor := range map[string]float64{"latency.physics.beta.1a": 1, "latency.physics.beta.3": 1, "latency.physics.beta.2b": 1} {
		if v, _ := coeffs["world"][key].(float64); v < floor {
			t.Errorf("%s = %v, below its physical floor %v", key, v, floor)
		}
	}
	// The world file runs calibrate in the fitted world: the same errors.
	reports := calibrateJSON(t, append(append([]string{"--world-file", world}, runs...), window...)...)
	for i, r := range reports {
		if got, want := calibration.ErrorsOf(&r), p.FitError[i]; math.Abs(got.TTFTMean-want.TTFTMean) > 1e-9 || math.Abs(got.E2EP90-want.E2EP90) > 1e-9 {
			t.Errorf("%s in the world file: errors %+v, the fit's %+v", r.Run, got, want)
		}
	}
	// A world file calibrates runs of its own world only.
	other := filepath.Join(testkit.SharedData(t, "sim2real/B"), "20260217-202857-llama-2-70b-tp4-general.meta.json")
	if code, _, stderr := run(t, "calibrate", "--world-file", world, other); code == 0 || !strings.Contains(stderr, "model is qwen/qwen3-14b, but the run") {
		t.Errorf("a Llama-2-70B run in the Qwen world: exit %d, %s", code, stderr)
	}
}

// The built-in world fitted to the public Qwen3-14B runs is what its
// provenance says: replayed in it, each run's errors are the recorded
// fit errors (all within 8 %), against −42 % to −77 % in the built-in
// trained-physics world.
func TestBuiltinQwenWorldReproducesItsFit(t *testing.T) {
	a := testkit.SharedData(t, "sim2real/A")
	name, text, err := settings.ReadWorldFile("qwen3-14b-h100-vllm0.23")
	if err != nil || name != "qwen3-14b-h100-vllm0.23" {
		t.Fatalf("%s: %v", name, err)
	}
	var file struct {
		Provenance struct {
			FitError []calibration.RunError `yaml:"fit_error"`
		} `yaml:"provenance"`
	}
	if err := yaml.Unmarshal(text, &file); err != nil {
		t.Fatal(err)
	}
	runs := []string{filepath.Join(a, "sweep_rate_agg_2rps"), filepath.Join(a, "sweep_rate_agg_8rps"), filepath.Join(a, "w5_sweep_agg12")}
	reports := calibrateJSON(t, append([]string{"--world-file", "qwen3-14b-h100-vllm0.23"}, runs...)...)
	for i, r := range reports {
		got, want := calibration.ErrorsOf(&r), file.Provenance.FitError[i]
		if math.Abs(got.TTFTMean-want.TTFTMean) > 1e-9 || math.Abs(got.E2EMean-want.E2EMean) > 1e-9 || math.Abs(got.E2EP90-want.E2EP90) > 1e-9 {
			t.Errorf("%s: errors %+v, the world file's provenance says %+v", r.Run, got, want)
		}
		for _, v := range []float64{got.TTFTMean, got.E2EMean, got.E2EP90} {
			if math.Abs(v) > 0.08 {
				t.Errorf("%s: an error of %+.1f %% in the fitted world", r.Run, 100*v)
			}
		}
	}
}
