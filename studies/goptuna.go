package studies

import (
	"github.com/c-bata/goptuna"

	"optimize/storage"
)

func deleteGoptunaStudy(st *storage.Store, name string) error {
	return goptuna.DeleteStudy(name, st.Goptuna())
}
