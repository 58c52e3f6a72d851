package cli

import (
	"testing"

	"optimize/storage"
)

// storedTrials reads study name's row and trial rows from the database at
// dsn, as the tests that check what a process stored need them.
func storedTrials(tb testing.TB, dsn, name string) (*storage.Study, []storage.Trial) {
	tb.Helper()
	st, err := storage.Open(dsn)
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	row, err := st.StudyByName(name)
	if err != nil {
		tb.Fatal(err)
	}
	trials, err := st.Trials(row.ID)
	if err != nil {
		tb.Fatal(err)
	}
	return row, trials
}
