package server

import (
	"errors"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"optimize/simcore/errtext"
)

// An API request names its inputs by JSON field where the CLI names the
// same inputs by flag: `"sampler_seed"` is `--sampler-seed`. The checks
// behind both are the CLI's, and their messages name flags; the API
// answers the same words with the field the client sent.

// jsonFields lists the JSON field names of the request type T, in
// declaration order.
func jsonFields[T any]() []string {
	var names []string
	t := reflect.TypeFor[T]()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}

// flagWord is a flag as the CLI's messages write it.
var flagWord = regexp.MustCompile(`--[a-z][a-z0-9-]*`)

// byField rewrites a user's-mistake error of the CLI's checks so that each
// flag that is a field of T is written as that field (--trials → trials);
// other errors are returned as they are.
func byField[T any](err error) error {
	var ue errtext.UsageError
	if !errors.As(err, &ue) {
		return err
	}
	fields := jsonFields[T]()
	msg := flagWord.ReplaceAllStringFunc(err.Error(), func(flag string) string {
		if field := strings.ReplaceAll(strings.TrimPrefix(flag, "--"), "-", "_"); slices.Contains(fields, field) {
			return field
		}
		return flag
	})
	return withStatus(http.StatusBadRequest, "%s", msg)
}

// jsonKind describes in JSON's words what a Go type accepts.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return jsonKind(t.Elem())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		elem := jsonKind(t.Elem())
		if _, noun, ok := strings.Cut(elem, " "); ok && (strings.HasPrefix(elem, "a ") || strings.HasPrefix(elem, "an ")) {
			elem = noun
		}
		return "a list of " + elem + "s"
	}
	return "an object"
}
