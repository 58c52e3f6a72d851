package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/invopop/jsonschema"

	"optimize/studies/report"
)

// The OpenAPI 3.1 document of the API, generated from the Go types of the
// routes' bodies (apiRoutes) by reflection, so that it cannot say other
// than what the server sends: GET /api/openapi.json serves it, and
// docs/openapi.json holds a copy for tools (a test keeps the two equal and
// checks real answers against it).

// schemaName names a Go type's schema: its package and its name
// ("report.ShowJSON"), so that two packages' types of one name stay two.
func schemaName(t reflect.Type) string {
	if t.Name() == "" {
		return "" // a slice, map or pointer: drawn in place
	}
	return path.Base(t.PkgPath()) + "." + t.Name()
}

// knownSchemas are the types whose JSON is not their Go shape.
func knownSchemas(t reflect.Type) *jsonschema.Schema {
	if t == reflect.TypeFor[report.Num]() {
		// A number, or null when it is not finite (Num.MarshalJSON).
		return &jsonschema.Schema{OneOf: []*jsonschema.Schema{{Type: "number"}, {Type: "null"}}}
	}
	return nil
}

// OpenAPI is the API's OpenAPI 3.1 document as indented JSON.
func (s *Server) OpenAPI() ([]byte, error) {
	r := &jsonschema.Reflector{Namer: schemaName, Mapper: knownSchemas}
	components := map[string]any{}
	schemaOf := func(v any) (any, error) {
		raw, err := json.Marshal(r.Reflect(v))
		if err != nil {
			return nil, err
		}
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, err
		}
		defs, _ := doc["$defs"].(map[string]any)
		maps.Copy(components, defs)
		delete(doc, "$defs")
		delete(doc, "$schema")
		delete(doc, "$id")
		return doc, nil
	}
	errorSchema, err := schemaOf(errorBody{})
	if err != nil {
		return nil, err
	}
	paths := map[string]map[string]any{}
	for _, route := range s.apiRoutes() {
		method, pattern, _ := strings.Cut(route.pattern, " ")
		answer, err := schemaOf(route.answer)
		if err != nil {
			return nil, fmt.Errorf("openapi: %s: %v", route.pattern, err)
		}
		op := map[string]any{
			"summary": route.summary,
			"responses": map[string]any{
				successStatus(route.pattern): jsonContent("the answer", answer),
				"default":                    jsonContent(`an error: {"error": "…"} with its status (400 bad input, 401 no token, 404 unknown, 409 conflict, 429 wait)`, errorSchema),
			},
		}
		if params := pathParams(pattern); len(params) > 0 {
			op["parameters"] = params
		}
		if route.request != nil {
			body, err := schemaOf(route.request)
			if err != nil {
				return nil, fmt.Errorf("openapi: %s: %v", route.pattern, err)
			}
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": body}}}
		}
		if paths[pattern] == nil {
			paths[pattern] = map[string]any{}
		}
		paths[pattern][strings.ToLower(method)] = op
	}
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "optimize serve",
			"version":     "1",
			"description": "Every body is the CLI's --output json for the same question. With a token, send Authorization: Bearer TOKEN.",
		},
		"paths":      paths,
		"components": map[string]any{"schemas": components},
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	out = bytes.ReplaceAll(out, []byte(`"#/$defs/`), []byte(`"#/components/schemas/`))
	return append(out, '\n'), nil
}

// successStatus is the status of a route's success.
func successStatus(pattern string) string {
	switch {
	case strings.HasPrefix(pattern, "POST "):
		return "202"
	default:
		return "200"
	}
}

func jsonContent(description string, schema any) map[string]any {
	return map[string]any{"description": description, "content": map[string]any{"application/json": map[string]any{"schema": schema}}}
}

var pathParam = regexp.MustCompile(`\{([a-z]+)\}`)

// pathParams are a pattern's {name} parameters.
func pathParams(pattern string) []map[string]any {
	var out []map[string]any
	for _, m := range pathParam.FindAllStringSubmatch(pattern, -1) {
		schema := map[string]any{"type": "string"}
		if m[1] == "n" {
			schema = map[string]any{"type": "integer"}
		}
		out = append(out, map[string]any{"name": m[1], "in": "path", "required": true, "schema": schema})
	}
	return slices.Clip(out)
}

// openAPI is GET /api/openapi.json.
func (s *Server) openAPI(w http.ResponseWriter, _ *http.Request) error {
	doc, err := s.OpenAPI()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(doc)
	return err
}
