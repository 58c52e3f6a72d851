package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"optimize/internal/testkit"
	"optimize/strategies/datasets"
)

// readmeBlock is one fenced shell block of README.md or of a guide.
type readmeBlock struct {
	file   string // README.md or docs/GUIDE.md
	line   int    // of the opening fence
	noTest bool   // info string "sh no-test"
	text   string // the commands, verbatim
}

// key names a block by its first command: the first line that is not a
// comment, without its trailing comment.
func (b readmeBlock) key() string {
	for _, l := range strings.Split(b.text, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			l, _, _ = strings.Cut(l, " #")
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// readmeNoTest are the only blocks the README may mark `sh no-test`, by
// their first command, and what they need that this test cannot have.
var readmeNoTest = map[string]string{
	"make test": "it would run this test within itself",
	"bin/optimize observe --server http://127.0.0.1:8000 --workload steady-chat --rate 5 --num-requests 300 \\": "a vLLM server",
	"bin/optimize serve --storage ./optimize.db":                                                                "a server that runs until Ctrl-C",
	// TestOptunaDrivesEvaluate runs the same example and import (20 trials).
	"python3 docs/examples/optuna_evaluate.py --optimize bin/optimize \\": "a Python that imports optuna",
	"optimize study create slo-cascade --trials 200 --name big \\":        "a PostgreSQL server elsewhere (db.example)",
	"docker build -t optimize:latest .":                                   "Docker and a Kubernetes cluster",
	"export OPTIMIZE_STORAGE='postgres://USER:PASSWORD@HOST:5432/DB'":     "the cluster's PostgreSQL server",
	// The calibration guide's runs are the user's own server's; the tests
	// run the same commands on the shared public runs
	// (TestCalibrateReproducesTheKnownErrors,
	// TestCalibrateFitBringsTheQwenRunsWithinTenPercent).
	"bin/optimize calibrate runs/qwen3-14b-2rps runs/qwen3-14b-8rps runs/qwen3-14b-12rps --hardware H100":                         "runs recorded from your own vLLM server",
	"bin/optimize calibrate --fit -o qwen-h100.yaml runs/qwen3-14b-2rps runs/qwen3-14b-8rps runs/qwen3-14b-12rps --hardware H100": "runs recorded from your own vLLM server",
}

// readmeBlocks returns a file's shell blocks in order. Every fenced block
// is `sh`, `sh no-test` or a language that is not a shell (yaml): a shell
// block under another name would escape this test.
func readmeBlocks(t *testing.T, file string, readme []byte) []readmeBlock {
	t.Helper()
	var blocks []readmeBlock
	var cur *readmeBlock
	var body strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(readme))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		fence := strings.HasPrefix(line, "```")
		switch {
		case fence && cur != nil:
			cur.text = body.String()
			if cur.line > 0 {
				blocks = append(blocks, *cur)
			}
			cur = nil
			body.Reset()
		case fence:
			switch info := strings.TrimPrefix(line, "```"); info {
			case "sh":
				cur = &readmeBlock{file: file, line: n}
			case "sh no-test":
				cur = &readmeBlock{file: file, line: n, noTest: true}
			case "yaml":
				cur = &readmeBlock{} // not a shell block: read past it
			default:
				t.Fatalf("%s:%d: fenced block %q: use sh (run by this test), sh no-test (listed in readmeNoTest) or yaml", file, n, info)
			}
		case cur != nil:
			body.WriteString(line + "\n")
		}
	}
	if cur != nil {
		t.Fatalf("%s:%d: block not closed", file, cur.line)
	}
	return blocks
}

// The README is arranged to run in order from a fresh clone: its first
// block is `make demo`, which makes study demo; no later block creates or
// deletes demo; the `sh no-test` blocks are exactly readmeNoTest's.
func TestReadmeBlocksInOrder(t *testing.T) { readmeRunnable(t) }

// readmeGuides are the guides README.md's Guides section links, in its
// order: the order their commands run in after the README's.
func readmeGuides(t *testing.T, readme []byte) []string {
	t.Helper()
	_, section, ok := strings.Cut(string(readme), "\n## Guides\n")
	if !ok {
		t.Fatal("README.md has no Guides section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var guides []string
	for _, m := range guideLink.FindAllStringSubmatch(section, -1) {
		guides = append(guides, m[1])
	}
	if len(guides) < 5 {
		t.Fatalf("the Guides section links %d guides", len(guides))
	}
	return guides
}

var guideLink = regexp.MustCompile(`\]\((docs/[a-z-]+\.md)\)`)

// readmeRunnable checks the arrangement of README.md and its guides and
// returns their blocks, README.md's first, then each guide's in the
// Guides section's order. Every guide in docs/ is linked there.
func readmeRunnable(t *testing.T) []readmeBlock {
	t.Helper()
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := readmeBlocks(t, "README.md", readme)
	guides := readmeGuides(t, readme)
	for _, g := range guides {
		text, err := os.ReadFile(filepath.Join(root, g))
		if err != nil {
			t.Fatalf("README.md links %s: %v", g, err)
		}
		blocks = append(blocks, readmeBlocks(t, g, text)...)
	}
	all, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, f := range all {
		if rel := "docs/" + filepath.Base(f); !slices.Contains(guides, rel) {
			t.Errorf("%s is not linked from the README's Guides section (so its commands would never run)", rel)
		}
	}
	if len(blocks) == 0 || blocks[0].noTest || blocks[0].key() != "make demo" {
		t.Fatalf("the README's first block must be `make demo`; got %+v", blocks[:min(1, len(blocks))])
	}
	var skipped []string
	for _, b := range blocks {
		if b.noTest {
			skipped = append(skipped, b.key())
			if why, ok := readmeNoTest[b.key()]; ok {
				t.Logf("%s:%d %q not run (%s)", b.file, b.line, b.key(), why)
			} else {
				t.Errorf("%s:%d: block %q is marked no-test but is not in readmeNoTest (run it, or say there what it needs)", b.file, b.line, b.key())
			}
			continue
		}
		for _, banned := range []string{"--name demo", "study delete demo"} {
			if strings.Contains(b.text, banned) {
				t.Errorf("%s:%d: %q: make demo made study demo and later sections use it", b.file, b.line, banned)
			}
		}
	}
	if len(skipped) != len(readmeNoTest) {
		t.Errorf("no-test blocks %q, want exactly readmeNoTest's %d", skipped, len(readmeNoTest))
	}
	return blocks
}

// The README's commands run in order from a fresh clone: each `sh` block,
// verbatim, with bash (-e, -o pipefail) in a copy of the repository
// holding what a clone holds (no bin/, no optimize.db), with an empty
// dataset cache.
func TestReadmeRunsInOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every command of the README (about a minute)")
	}
	blocks := readmeRunnable(t)
	root := repoRoot(t)
	dir := readmeWorkDir(t, root)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		// The user's own settings would send the README elsewhere.
		for _, name := range []string{"OPTIMIZE_STORAGE", TokenVar, "MAKEFLAGS", "MAKELEVEL", datasets.CacheEnv, datasets.MirrorEnv} {
			if strings.HasPrefix(kv, name+"=") {
				return true
			}
		}
		return false
	})
	// The README's `workload fetch` downloads the datasets it uses. Here it
	// runs offline: $OPTIMIZE_DATASET_MIRROR points it at a server on
	// 127.0.0.1 over the shared copies (../shared/data/traces), so the
	// download, the checksum check and the cache are the real ones; the
	// cache ($OPTIMIZE_CACHE_DIR) starts empty, as a new user's does.
	mirror, _ := testkit.DatasetMirror(t)
	env = append(env, datasets.MirrorEnv+"="+mirror, datasets.CacheEnv+"="+t.TempDir())
	for _, b := range blocks {
		if b.noTest {
			continue
		}
		began := time.Now()
		cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", b.text)
		cmd.Dir, cmd.Env = dir, env
		var out, errs bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errs
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s:%d: %v\n%s\nstdout (end):\n%s\nstderr (end):\n%s", b.file, b.line, err, b.text, tail(out.String(), 2000), tail(errs.String(), 2000))
		}
		t.Logf("%s:%d %q: %.1fs", b.file, b.line, b.key(), time.Since(began).Seconds())
		if b.key() == "make demo" {
			// make demo says what to run next, as the quick start does.
			if next := "bin/optimize study show demo"; !strings.Contains(out.String(), next) {
				t.Errorf("make demo does not say how to open the study (%q):\n%s", next, tail(out.String(), 600))
			}
		}
	}
	for _, made := range []string{"optimize.db", "pareto.csv", "history.png", "pareto.svg", "demo.html"} {
		if _, err := os.Stat(filepath.Join(dir, made)); err != nil {
			t.Errorf("after the README: %v", err)
		}
	}
}

// repoRoot is the module's directory (this package is internal/cli).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	return root
}

// readmeWorkDir is a fresh clone's files (tracked, and new ones not
// ignored) copied from root: no bin/, no optimize.db. Its path is fixed
// for root, so that Go's build cache, which keys a package by its
// directory, compiles the copy once, not on every run.
func readmeWorkDir(t *testing.T, root string) string {
	t.Helper()
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(os.TempDir(), "optimize-readme-"+hex.EncodeToString(sum[:6]))
	// Two runs from one checkout at once take turns rather than delete
	// each other's copy.
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Close() }) // closing releases the lock
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ls := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	ls.Dir = root
	list, err := ls.Output()
	if err != nil {
		t.Skipf("git ls-files failed (the test copies the files a clone has; this is no git checkout): %v", err)
	}
	for _, name := range strings.Split(strings.TrimSuffix(string(list), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join(root, name))
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet committed
		}
		if err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, data, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("…%s", s[len(s)-n:])
}
