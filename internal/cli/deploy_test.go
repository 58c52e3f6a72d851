package cli

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// The Kubernetes manifests in deploy/kubernetes/, run as Kubernetes would
// run them but as local processes: exactly their command lines and
// environment (the Secret's DSN replaced by a fresh PostgreSQL database's,
// the image's binaries by freshly built ones), the create Job, then one
// worker per index of the Indexed Job at once.

const deployDir = "../../deploy/kubernetes"

// k8sObject holds the fields of the manifests the test reads.
type k8sObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	StringData map[string]string `yaml:"stringData"`
	Spec       struct {
		CompletionMode   string `yaml:"completionMode"`
		Completions      *int   `yaml:"completions"`
		Parallelism      *int   `yaml:"parallelism"`
		PodFailurePolicy struct {
			Rules []struct {
				Action      string `yaml:"action"`
				OnExitCodes *struct {
					ContainerName string `yaml:"containerName"`
					Operator      string `yaml:"operator"`
					Values        []int  `yaml:"values"`
				} `yaml:"onExitCodes"`
			} `yaml:"rules"`
		} `yaml:"podFailurePolicy"`
		Template struct {
			Spec struct {
				RestartPolicy                 string         `yaml:"restartPolicy"`
				TerminationGracePeriodSeconds *int           `yaml:"terminationGracePeriodSeconds"`
				Containers                    []k8sContainer `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type k8sContainer struct {
	Name    string   `yaml:"name"`
	Image   string   `yaml:"image"`
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	Env     []struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom *struct {
			SecretKeyRef *struct {
				Name string `yaml:"name"`
				Key  string `yaml:"key"`
			} `yaml:"secretKeyRef"`
			FieldRef *struct {
				FieldPath string `yaml:"fieldPath"`
			} `yaml:"fieldRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
}

// readManifest decodes the fields the test reads of the one object of a
// manifest file.
func readManifest(t *testing.T, file, kind string) *k8sObject {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir, file))
	if err != nil {
		t.Fatal(err)
	}
	var o k8sObject
	if err := yaml.Unmarshal(b, &o); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if o.Kind != kind || o.Metadata.Name == "" {
		t.Fatalf("%s: kind %q named %q, want a named %s", file, o.Kind, o.Metadata.Name, kind)
	}
	return &o
}

// container is the Job's one container, checked against what the image and
// the worker's exit codes need.
func (o *k8sObject) container(t *testing.T, file string) k8sContainer {
	t.Helper()
	cs := o.Spec.Template.Spec.Containers
	if len(cs) != 1 || len(cs[0].Command) != 1 {
		t.Fatalf("%s: want one container whose command is one binary of the image, got %+v", file, cs)
	}
	if p := o.Spec.Template.Spec.RestartPolicy; p != "Never" {
		t.Errorf("%s: restartPolicy %q: podFailurePolicy needs Never", file, p)
	}
	for _, a := range append(cs[0].Command, cs[0].Args...) {
		if strings.Contains(a, "$(") {
			t.Errorf("%s: %q uses $(VAR) expansion, which this test does not do", file, a)
		}
	}
	return cs[0]
}

// exitRule reports the podFailurePolicy action for container's exit code.
func (o *k8sObject) exitRule(container string, code int) string {
	for _, r := range o.Spec.PodFailurePolicy.Rules {
		if e := r.OnExitCodes; e != nil && e.ContainerName == container && e.Operator == "In" && slices.Contains(e.Values, code) {
			return r.Action
		}
	}
	return ""
}

// flagValue is the value of --name in args (as --name V or --name=V).
func flagValue(t *testing.T, file string, args []string, name string) string {
	t.Helper()
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	t.Fatalf("%s: no %s in %q", file, name, args)
	return ""
}

// podEnv is the environment Kubernetes gives container c: its env entries,
// secretKeyRef values from secret (the DSN replaced by dsn), metadata.name
// as pod, plus extra. Nothing of the test's own environment leaks in.
func podEnv(t *testing.T, file string, c k8sContainer, secret *k8sObject, dsn, pod string, extra ...string) []string {
	t.Helper()
	env := append([]string{"HOME=" + t.TempDir()}, extra...)
	for _, e := range c.Env {
		v := e.Value
		switch {
		case e.ValueFrom == nil:
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			if ref.Name != secret.Metadata.Name || secret.StringData[ref.Key] == "" {
				t.Fatalf("%s: env %s reads key %q of Secret %q; secret.yaml is Secret %q with keys %v",
					file, e.Name, ref.Key, ref.Name, secret.Metadata.Name, secret.StringData)
			}
			v = dsn
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
			v = pod
		default:
			t.Fatalf("%s: env %s: a valueFrom this test does not provide", file, e.Name)
		}
		env = append(env, e.Name+"="+v)
	}
	return env
}

// runPod runs a container's command line with env in an empty directory and
// returns its exit code and output.
func runPod(t *testing.T, bins map[string]string, c k8sContainer, env []string) (code int, stdout, stderr string) {
	t.Helper()
	bin, ok := bins[c.Command[0]]
	if !ok {
		t.Fatalf("container %s runs %q, which the image does not have", c.Name, c.Command[0])
	}
	cmd := exec.Command(bin, c.Args...)
	cmd.Env, cmd.Dir = env, t.TempDir()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String(), errb.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errb.String()
}

func TestKubernetesManifestsRunAsDeclared(t *testing.T) {
	secret := readManifest(t, "secret.yaml", "Secret")
	create := readManifest(t, "create-study.yaml", "Job")
	workers := readManifest(t, "workers.yaml", "Job")
	cc := create.container(t, "create-study.yaml")
	wc := workers.container(t, "workers.yaml")
	if cc.Image != wc.Image {
		t.Errorf("the Jobs run different images, %q and %q", cc.Image, wc.Image)
	}
	if a := workers.exitRule(wc.Name, ExitStopped); a != "Ignore" {
		t.Errorf("workers.yaml: exit code %d (stopped by SIGTERM, nothing lost) has action %q, want Ignore (a replacement pod, no failure counted)", ExitStopped, a)
	}
	for _, j := range []struct {
		file string
		o    *k8sObject
		c    k8sContainer
	}{{"create-study.yaml", create, cc}, {"workers.yaml", workers, wc}} {
		if a := j.o.exitRule(j.c.Name, 2); a != "FailJob" {
			t.Errorf("%s: exit code 2 (usage error) has action %q, want FailJob", j.file, a)
		}
	}
	s := workers.Spec
	if s.CompletionMode != "Indexed" || s.Completions == nil || s.Parallelism == nil || *s.Completions != *s.Parallelism || *s.Completions < 2 {
		t.Fatalf("workers.yaml: completionMode %q, completions %v, parallelism %v: want an Indexed Job running all its pods at once",
			s.CompletionMode, s.Completions, s.Parallelism)
	}
	// A SIGTERM during the connection is acted on once it is made, within
	// $OPTIMIZE_CONNECT_TIMEOUT (10 s).
	if g := s.Template.Spec.TerminationGracePeriodSeconds; g == nil || *g < 10 {
		t.Errorf("workers.yaml: terminationGracePeriodSeconds %v, want ≥ 10", g)
	}
	study := flagValue(t, "create-study.yaml", cc.Args, "--name")
	var total int
	if _, err := fmt.Sscan(flagValue(t, "create-study.yaml", cc.Args, "--trials"), &total); err != nil {
		t.Fatalf("create-study.yaml: --trials: %v", err)
	}
	if w := flagValue(t, "workers.yaml", wc.Args, "--study"); w != study {
		t.Fatalf("workers.yaml works on study %q, create-study.yaml makes %q", w, study)
	}
	checkREADME(t, secret, create, workers, cc.Image, study)
	// The image has the Jobs' commands: built from ./cmd/NAME, on PATH.
	dockerfile, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{cc.Command[0], wc.Command[0]} {
		if !regexp.MustCompile(`(?m)go build .*-o /out/`+c+` \./cmd/`+c+`\b`).Match(dockerfile) ||
			!regexp.MustCompile(`(?m)^COPY --from=build .*/out/`+c+`\b.* /usr/local/bin/$`).Match(dockerfile) {
			t.Errorf("Dockerfile does not build ./cmd/%s into /usr/local/bin/%s", c, c)
		}
	}

	dsn := pgTestDB(t)
	optimizeBin, workerBin := workerBinaries(t)
	bins := map[string]string{"optimize": optimizeBin, "worker": workerBin}
	began := time.Now()
	code, out, errOut := runPod(t, bins, cc, podEnv(t, "create-study.yaml", cc, secret, dsn, create.Metadata.Name+"-a1b2c"))
	if code != 0 || !strings.Contains(out, "study "+study+" created") {
		t.Fatalf("create Job: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// A retried create pod (its predecessor died after the study was made)
	// succeeds without touching the study.
	code, out, errOut = runPod(t, bins, cc, podEnv(t, "create-study.yaml", cc, secret, dsn, create.Metadata.Name+"-d3e4f"))
	if code != 0 || !strings.Contains(out, "study "+study+" exists already (0/") {
		t.Fatalf("retried create Job: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	created := time.Since(began)

	n := *s.Completions
	type result struct {
		index, code int
		stderr      string
	}
	results := make(chan result, n)
	for i := range n {
		pod := fmt.Sprintf("%s-%d-%05d", workers.Metadata.Name, i, rand.IntN(1e5))
		env := podEnv(t, "workers.yaml", wc, secret, dsn, pod, fmt.Sprintf("JOB_COMPLETION_INDEX=%d", i))
		go func() {
			code, _, stderr := runPod(t, bins, wc, env)
			results <- result{i, code, stderr}
		}()
	}
	for range n {
		r := <-results
		if r.code != 0 {
			t.Errorf("worker pod %d: exit %d (the Job counts only 0 as success)\n%s", r.index, r.code, r.stderr)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	trialsExactlyOnce(t, dsn, study, total)
	t.Logf("create Job (twice) %v; %d worker pods finished %d trials of %s in %v",
		created.Round(time.Millisecond), n, total, study, (time.Since(began) - created).Round(time.Millisecond))
}

// checkREADME: the README's Kubernetes section names the manifests' files,
// Secret, Jobs, image and study as they are.
func checkREADME(t *testing.T, secret, create, workers *k8sObject, image, study string) {
	t.Helper()
	b, err := os.ReadFile("../../docs/scaling-out.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, m := range regexp.MustCompile(`deploy/kubernetes/[\w.-]+`).FindAllString(readme, -1) {
		if _, err := os.Stat(filepath.Join("../..", m)); err != nil {
			t.Errorf("README names %s: %v", m, err)
		}
	}
	for _, m := range regexp.MustCompile(`job/([\w-]+)`).FindAllStringSubmatch(readme, -1) {
		if m[1] != create.Metadata.Name && m[1] != workers.Metadata.Name {
			t.Errorf("README names job/%s; the Jobs are %s and %s", m[1], create.Metadata.Name, workers.Metadata.Name)
		}
	}
	var key string
	for k := range secret.StringData {
		key = k
	}
	for _, want := range []string{
		"docker build -t " + image + " .",
		"kubectl create secret generic " + secret.Metadata.Name + " --from-literal=" + key + "=",
		"kubectl apply -f deploy/kubernetes/create-study.yaml",
		"job/" + create.Metadata.Name,
		"kubectl apply -f deploy/kubernetes/workers.yaml",
		"job/" + workers.Metadata.Name,
		"optimize study show " + study,
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("README does not say %q", want)
		}
	}
}
