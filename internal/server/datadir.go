package server

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"optimize/simcore/errtext"
	"optimize/simcore/workload"
	"optimize/strategies/datasets"
	"optimize/strategies/workloads"
)

// dataDir is the one directory whose files a request may name (serve
// --data-dir): a workload spec or a trace. Everything else a request names
// is a built-in. Without a data directory no request opens a file at all.
//
// A name is relative to the directory, has no ".." and, with every link
// in it followed, stays inside the directory; a TraceV2 header's CSV,
// which the reader opens beside it, must too. The name the study stores
// is the file's real path, so later commands open what was checked.
// Anything else, a missing file included, gets one refusal that quotes at
// most a bounded prefix of the name and nothing of any file: a client
// cannot tell a forbidden file from a missing one, let alone read it.
type dataDir struct {
	real string // the directory with its links followed; "" = none given
}

// newDataDir checks the operator's --data-dir ("" = none).
func newDataDir(dir string) (dataDir, error) {
	if dir == "" {
		return dataDir{}, nil
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return dataDir{}, fmt.Errorf("--data-dir %s: %v", dir, err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return dataDir{}, fmt.Errorf("--data-dir %s: not a directory", dir)
	}
	return dataDir{real: abs}, nil
}

// workload returns the name a study created through the API stores: a
// built-in name as it is, a name that reads a file with that file's real
// path in the data directory; or the refusal.
func (d dataDir) workload(name string) (string, error) {
	ref := workloads.ParseRef(name)
	if ref.Builtin || (!ref.ReadsFile() && !strings.ContainsAny(ref.File, `/\`)) {
		// A built-in, or a word that opens nothing: study create's own
		// checks name the built-ins, in the CLI's words.
		return name, nil
	}
	real, ok := d.file(ref.File)
	if !ok {
		return "", d.refusal(name)
	}
	return ref.With(real), nil
}

// refusal is the one answer for every file a request may not open.
func (d dataDir) refusal(name string) error {
	where := "; this server opens no file for a request (it was started without --data-dir)"
	if d.real != "" {
		where = " nor a readable file under this server's --data-dir (a name relative to it, with no link out of it)"
	}
	builtins := append(workloads.Builtins().Names(), datasets.Names()...)
	return withStatus(http.StatusBadRequest, "workload: %s: not a built-in workload or trace (%s)%s",
		errtext.Quote(name), strings.Join(builtins, ", "), where)
}

// file resolves rel inside the directory: its real path, and whether it
// is a regular file there whose TraceV2 companion, if it has one, is
// there too.
func (d dataDir) file(rel string) (string, bool) {
	if d.real == "" || !filepath.IsLocal(rel) {
		return "", false
	}
	real, ok := d.inside(filepath.Join(d.real, rel))
	if !ok {
		return "", false
	}
	if companion := workload.TraceV2DataPath(real); companion != "" {
		if _, err := os.Lstat(companion); err == nil {
			if _, ok := d.inside(companion); !ok {
				return "", false
			}
		}
	}
	return real, true
}

// inside follows every link in path and reports the real path when it is
// a regular file inside the directory.
func (d dataDir) inside(path string) (string, bool) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", false
	}
	rel, err := filepath.Rel(d.real, real)
	if err != nil || !filepath.IsLocal(rel) {
		return "", false
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	return real, true
}
