package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// The dashboard's pages are one HTML file; the server embeds in it the
// API documents the first view needs, keyed by their API path, so that
// the page is drawn before its load event without waiting on requests
// (a headless browser that dumps the DOM at load sees the plots). Any
// later view, and every refresh, reads the API.

// preload builds the documents of a page; nil for none.
type preload func(r *http.Request) (map[string]json.RawMessage, error)

func (s *Server) pages() {
	index, err := fs.ReadFile(web, "web/index.html")
	if err != nil {
		panic("server: the dashboard's index.html is not embedded: " + err.Error())
	}
	page := func(docs preload) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			body := index
			if m, err := docs(r); err == nil && len(m) > 0 {
				js, _ := json.Marshal(m) // escapes <, > and &: safe inside a script element
				tag := append(append([]byte(`<script type="application/json" id="preload">`), js...), "</script>"...)
				body = bytes.Replace(index, []byte("<!--preload-->"), tag, 1)
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			_, _ = w.Write(body)
		}
	}
	s.mux.HandleFunc("GET /{$}", page(s.listDocs))
	s.mux.HandleFunc("GET /study/{name}", page(s.studyDocs))
	s.mux.HandleFunc("GET /trial/{name}/{n}", page(s.trialDocs))
	comparePage := page(s.compareDocs)
	s.mux.HandleFunc("GET /compare/{names}", func(w http.ResponseWriter, r *http.Request) {
		raw := r.PathValue("names")
		names, err := compareNames(raw)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if strings.Join(names, ",") != raw {
			// The page draws the names in its address: send it to the
			// list without repeats, which the page's own requests follow.
			escaped := make([]string, len(names))
			for i, n := range names {
				escaped[i] = url.PathEscape(n)
			}
			http.Redirect(w, r, "/compare/"+strings.Join(escaped, ","), http.StatusSeeOther)
			return
		}
		comparePage(w, r)
	})
}

// MaxCompare is the most studies one comparison draws: each costs the
// server a history document, and beyond a handful the overlaid curves
// cannot be told apart.
const MaxCompare = 8

// compareNames is the comma-separated list of a comparison's address,
// each name once, in the order given; an error beyond MaxCompare names
// (counted without repeats, so a long list is refused at the first name
// too many).
func compareNames(raw string) ([]string, error) {
	var names []string
	for n := range strings.SplitSeq(raw, ",") {
		if n == "" || slices.Contains(names, n) {
			continue
		}
		if len(names) == MaxCompare {
			return nil, fmt.Errorf("compare: more than %d studies; compare at most %d at a time", MaxCompare, MaxCompare)
		}
		names = append(names, n)
	}
	if len(names) == 0 {
		return nil, errors.New("compare: name the studies, e.g. /compare/A,B")
	}
	return names, nil
}

// doc renders one API answer as the API would.
func (s *Server) doc(path string, handle func(w http.ResponseWriter, r *http.Request) error, values map[string]string) (json.RawMessage, error) {
	req, _ := http.NewRequest(http.MethodGet, "/api/"+path, nil)
	for k, v := range values {
		req.SetPathValue(k, v)
	}
	rec := &recorder{header: http.Header{}}
	if err := handle(rec, req); err != nil {
		return nil, err
	}
	return json.RawMessage(rec.body.Bytes()), nil
}

func (s *Server) listDocs(*http.Request) (map[string]json.RawMessage, error) {
	studiesDoc, err := s.doc("studies", s.listStudies, nil)
	if err != nil {
		return nil, err
	}
	templatesDoc, err := s.doc("templates", s.listTemplates, nil)
	return map[string]json.RawMessage{"studies": studiesDoc, "templates": templatesDoc}, err
}

func (s *Server) studyDocs(r *http.Request) (map[string]json.RawMessage, error) {
	name := r.PathValue("name")
	key := "studies/" + url.PathEscape(name)
	vals := map[string]string{"name": name}
	out := map[string]json.RawMessage{}
	for _, d := range []struct {
		path   string
		handle func(w http.ResponseWriter, r *http.Request) error
	}{{key, s.showStudy}, {key + "/history", s.history}, {key + "/trials", s.trials}, {"glossary", s.glossary}} {
		js, err := s.doc(d.path, d.handle, vals)
		if err != nil {
			return nil, err
		}
		out[d.path] = js
	}
	var show struct{ Template string }
	if err := json.Unmarshal(out[key], &show); err != nil {
		return nil, err
	}
	js, err := s.doc("templates/"+show.Template, s.showTemplate, map[string]string{"name": show.Template})
	out["templates/"+url.PathEscape(show.Template)] = js
	return out, err
}

func (s *Server) trialDocs(r *http.Request) (map[string]json.RawMessage, error) {
	name, n := r.PathValue("name"), r.PathValue("n")
	if _, err := strconv.Atoi(n); err != nil {
		return nil, err
	}
	path := "studies/" + url.PathEscape(name) + "/trials/" + n
	js, err := s.doc(path, s.trial, map[string]string{"name": name, "n": n})
	if err != nil {
		return nil, err
	}
	gl, err := s.doc("glossary", s.glossary, nil)
	return map[string]json.RawMessage{path: js, "glossary": gl}, err
}

func (s *Server) compareDocs(r *http.Request) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	names, err := compareNames(r.PathValue("names"))
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		path := "studies/" + url.PathEscape(name) + "/history"
		js, err := s.doc(path, s.history, map[string]string{"name": name})
		if err != nil {
			return nil, err
		}
		out[path] = js
	}
	return out, nil
}

// recorder keeps what a handler writes.
type recorder struct {
	header http.Header
	body   bytes.Buffer
	status int
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(status int)      { r.status = status }
