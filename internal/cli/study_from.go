package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"optimize/studies"
)

// readFromJournal reads study create's --from when it names an Optuna
// JournalStorage log rather than an earlier study: a path with a '/', or
// an existing regular file (a study name never holds a '/').
func readFromJournal(o *studies.CreateOptions) error {
	if o.From == "" {
		return nil
	}
	info, err := os.Stat(o.From)
	if !strings.ContainsRune(o.From, '/') && (err != nil || !info.Mode().IsRegular()) {
		return nil // a study's name
	}
	if err == nil && !info.Mode().IsRegular() {
		return fmt.Errorf("--from: %s is not a file (want an Optuna journal, or an earlier study's name)", o.From)
	}
	data, err := os.ReadFile(o.From)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("--from: %s: no such file (want an Optuna journal, or an earlier study's name)", o.From)
	}
	if err != nil {
		return fmt.Errorf("--from: %v", err)
	}
	o.FromJournal = data
	if o.FromJournal == nil {
		o.FromJournal = []byte{}
	}
	return nil
}
