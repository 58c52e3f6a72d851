package datasets

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const (
	// CacheEnv names the cache folder; unset, it is os.UserCacheDir()/optimize
	// ($XDG_CACHE_HOME/optimize or ~/.cache/optimize on Linux).
	CacheEnv = "OPTIMIZE_CACHE_DIR"
	// MirrorEnv is a base URL to fetch datasets from instead of their
	// public URLs: a dataset is looked up under it by its upstream file
	// name (MIRROR/conversation_trace.jsonl). `workload fetch --mirror`
	// overrides it.
	MirrorEnv = "OPTIMIZE_DATASET_MIRROR"
)

// CacheDir is the cache folder: $OPTIMIZE_CACHE_DIR, else
// os.UserCacheDir()/optimize.
func CacheDir() (string, error) {
	if dir := os.Getenv(CacheEnv); dir != "" {
		return dir, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("dataset cache: $%s is not set and there is no user cache folder (%v)", CacheEnv, err)
	}
	return filepath.Join(dir, "optimize"), nil
}

// PathIn is where the dataset lives in the cache folder cache.
func (d Dataset) PathIn(cache string) string {
	return filepath.Join(cache, "datasets", d.Name, d.File())
}

// Locate returns the dataset's file in the cache, or a one-line error
// saying how to fetch it. A file of the pinned size counts as present:
// Install renames a file into place only once its checksum matched, so
// the full hash is checked where the file is written (and by `workload
// fetch` again), not on every read.
func Locate(d Dataset) (string, error) {
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	file := d.PathIn(cache)
	info, err := os.Stat(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("dataset not fetched yet: run 'optimize workload fetch %s' (%s from %s, %s)", d.Name, d.SizeText(), d.Source(), d.Licence)
	case err != nil:
		return "", fmt.Errorf("dataset %s: %v", d.Name, err)
	case info.Size() != d.Size:
		return "", fmt.Errorf("dataset %s: %s holds %d bytes, not the %d published: run 'optimize workload fetch %s' to fetch it again", d.Name, file, info.Size(), d.Size, d.Name)
	}
	return file, nil
}

// Fetched reports whether the dataset is in the cache (at its pinned
// size, as Locate checks it).
func Fetched(d Dataset) bool {
	_, err := Locate(d)
	return err == nil
}

// ChecksumError is a file that is not the dataset as published.
type ChecksumError struct {
	Dataset           string
	From              string // where the bytes came from
	WantHash, GotHash string
	WantSize, GotSize int64
	// Longer: the source held more than WantSize bytes; GotHash and
	// GotSize are of the bytes read, one past WantSize.
	Longer bool
}

func (e *ChecksumError) Error() string {
	got := fmt.Sprintf("%d bytes", e.GotSize)
	if e.Longer {
		got = fmt.Sprintf("its first %d bytes, and it is longer", e.GotSize)
	}
	return fmt.Sprintf("dataset %s: %s is not the file published: expected sha256 %s (%d bytes), got sha256 %s (%s)",
		e.Dataset, e.From, e.WantHash, e.WantSize, e.GotHash, got)
}

// Install writes the dataset, read from r (from names where, for
// errors), into the cache folder cache and returns its path. The bytes go
// to a temporary file beside the final one, which is renamed into place
// only when its size and SHA-256 are the pinned ones; otherwise the
// temporary file is removed and the error (a *ChecksumError) names the
// expected and the received hash. Reading stops one byte past the pinned
// size, so a wrong source cannot fill the disk.
func Install(d Dataset, cache, from string, r io.Reader) (string, error) {
	file := d.PathIn(cache)
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return "", fmt.Errorf("dataset %s: %v", d.Name, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), d.File()+".*.part")
	if err != nil {
		return "", fmt.Errorf("dataset %s: %v", d.Name, err)
	}
	keep := false
	defer func() {
		if !keep {
			tmp.Close()
			os.Remove(tmp.Name())
			os.Remove(filepath.Dir(file)) // only if empty: nothing of a failed write stays
		}
	}()
	if err := copyChecked(d, from, tmp, io.LimitReader(r, d.Size+1)); err != nil {
		return "", err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return "", fmt.Errorf("dataset %s: %v", d.Name, err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("dataset %s: %v", d.Name, err)
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return "", fmt.Errorf("dataset %s: %v", d.Name, err)
	}
	keep = true
	return file, nil
}

// Verify checks a file against the dataset's pinned size and SHA-256.
func Verify(d Dataset, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("dataset %s: %v", d.Name, err)
	}
	defer f.Close()
	return copyChecked(d, file, io.Discard, io.LimitReader(f, d.Size+1))
}

// copyChecked copies r (from names it) to w and checks what it read
// against the dataset's pinned size and SHA-256; callers read at most one
// byte past the size, which is enough to tell a longer file.
func copyChecked(d Dataset, from string, w io.Writer, r io.Reader) error {
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), r)
	if err != nil {
		return fmt.Errorf("dataset %s: reading %s: %v", d.Name, from, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != d.SHA256 || n != d.Size {
		return &ChecksumError{Dataset: d.Name, From: from, WantHash: d.SHA256, GotHash: got, WantSize: d.Size, GotSize: n, Longer: n > d.Size}
	}
	return nil
}

// SourceURL is where the dataset is downloaded from: its public URL, or
// the upstream file name under mirror when mirror is set.
func SourceURL(d Dataset, mirror string) string {
	if mirror == "" {
		return d.URL()
	}
	return strings.TrimRight(mirror, "/") + "/" + url.PathEscape(d.File())
}

// CheckMirror says whether mirror is a base URL datasets can be fetched
// from: http or https, with a host.
func CheckMirror(mirror string) error {
	u, err := url.Parse(mirror)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http:// or https:// base URL", mirror)
	}
	return nil
}

// FetchResult is what Fetch did.
type FetchResult struct {
	Path       string // the file in the cache
	Downloaded bool   // false: it was there already and its checksum matched
	From       string // the URL downloaded (empty when not downloaded)
}

// client is the HTTP client of Fetch: the default transport (which honours
// $HTTPS_PROXY), with a limit on a whole download so that a stalled
// server does not hang the command.
var client = &http.Client{Timeout: 10 * time.Minute}

// Fetch puts the dataset into the cache folder cache: a file already
// there is kept when its checksum matches (and replaced when it does
// not); otherwise it is downloaded from SourceURL(d, mirror) and
// installed (Install checks it).
func Fetch(ctx context.Context, d Dataset, cache, mirror string) (FetchResult, error) {
	file := d.PathIn(cache)
	if _, err := os.Stat(file); err == nil && Verify(d, file) == nil {
		return FetchResult{Path: file}, nil
	}
	from := SourceURL(d, mirror)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, from, nil)
	if err != nil {
		return FetchResult{}, fmt.Errorf("dataset %s: %v", d.Name, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return FetchResult{}, fmt.Errorf("dataset %s: %v", d.Name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return FetchResult{}, fmt.Errorf("dataset %s: GET %s: %s", d.Name, from, resp.Status)
	}
	path, err := Install(d, cache, from, resp.Body)
	if err != nil {
		return FetchResult{}, err
	}
	return FetchResult{Path: path, Downloaded: true, From: from}, nil
}
