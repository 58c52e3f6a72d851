package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"optimize/simcore/errtext"
)

// Who may do what, decided before any handler runs:
//
//   - Without a token the server answers loopback host names only (a page
//     on a DNS name that resolves here is refused), and nothing needs a
//     credential.
//   - With a token, every request needs it: `Authorization: Bearer TOKEN`
//     from tools, or the session cookie a browser gets by signing in at
//     /login (a form: the token never appears in a URL). Config.PublicRead
//     lets GET and HEAD through without it; writes still need it. The
//     dashboard's own files (app.js, charts.js, app.css) are served to anyone: they
//     are the same bytes in every copy of the binary and hold no study
//     data, and the sign-in page is drawn with them.
//   - A write (any method but GET and HEAD) must not come from another
//     site's page: a browser says where a request comes from in
//     Sec-Fetch-Site (or, if it is older, in Origin), and anything but this
//     server refuses the write. A request with neither is a tool (curl, a
//     script); browsers send Origin with every POST. A write signed in by
//     the cookie must carry one of them, since only browsers hold it.
//     API writes must also be JSON, which no cross-site form can send
//     (a DELETE, which has no body, needs no content type).
//   - A wrong token, in the header or the sign-in form, counts against
//     the client's address; too many in a row and it waits (login.go).
//   - A method with no route for the path is 405 with the methods that
//     have one in Allow.

// probeMethods are the methods Allow can list.
var probeMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// apiFallback is the path of the patterns that answer 404 for an API path
// no route matches.
const apiFallback = "/api/"

// loginPath is where a browser signs in with the token.
const loginPath = "/login"

// access holds what the guard needs, derived once from the configuration.
type access struct {
	token      string
	publicRead bool
	cookieName string          // per token: two servers on one host keep their own sessions
	sessions   sessions        // the cookie's values (login.go)
	guesses    *guesses        // wrong tokens per client (login.go)
	assets     map[string]bool // the dashboard's files anyone may fetch
}

func newAccess(cfg Config) access {
	a := access{token: cfg.Token, publicRead: cfg.PublicRead, assets: map[string]bool{},
		guesses: newGuesses(cfg.LoginBackoff, time.Now)}
	if cfg.Token != "" {
		h := hmac.New(sha256.New, []byte(cfg.Token))
		h.Write([]byte("optimize serve cookie name"))
		a.cookieName = "optimize-" + hex.EncodeToString(h.Sum(nil))[:8]
		key := cfg.SessionKey
		if len(key) == 0 {
			key = NewSessionKey()
		}
		a.sessions = sessions{key: key, tokenDigest: sha256.Sum256([]byte(cfg.Token)), now: time.Now}
	}
	files, _ := fs.ReadDir(web, "web")
	for _, f := range files {
		if f.Name() != "index.html" { // the pages carry study data: they need the token
			a.assets["/"+f.Name()] = true
		}
	}
	return a
}

// secure adds the headers every answer carries and applies the rules
// above, in order: host, method, origin, credential, content type.
func (s *Server) secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'")
		if s.access.token == "" && !Loopback(hostOnly(r.Host)) {
			writeError(w, http.StatusMisdirectedRequest, fmt.Errorf("host %q: this server answers loopback names only (give --token to serve beyond loopback)", r.Host))
			return
		}
		allow := s.allowed(r)
		if len(allow) == 0 {
			noRoute(w, r)
			return
		}
		if !slices.Contains(allow, r.Method) {
			h.Set("Allow", strings.Join(allow, ", "))
			writeError(w, http.StatusMethodNotAllowed, fmt.Errorf("%s %s: not supported here (allowed: %s)", r.Method, r.URL.Path, strings.Join(allow, ", ")))
			return
		}
		write := r.Method != http.MethodGet && r.Method != http.MethodHead
		if write {
			if err := sameOrigin(r); err != nil {
				writeError(w, http.StatusForbidden, err)
				return
			}
		}
		if got, ok := bearerOf(r); ok && s.access.token != "" {
			// A token in a header is a guess like one in the form.
			client := clientOf(r)
			if wait := s.access.guesses.wait(client); wait > 0 {
				tooMany(w, wait)
				return
			}
			if s.access.matches(got) {
				s.access.guesses.succeeded(client)
			} else {
				s.access.guesses.missed(client)
			}
		}
		if !s.access.allows(r, write) {
			s.unauthorized(w, r, write)
			return
		}
		// A DELETE carries no body: no form can send one, and a script
		// of another site would need a CORS preflight this server never
		// grants.
		if write && r.URL.Path != loginPath && !(r.Method == http.MethodDelete && r.ContentLength == 0) {
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				writeError(w, http.StatusUnsupportedMediaType, fmt.Errorf("content type %q: writes send application/json", ct))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// allowed lists the methods that have a route for r's path; none for an
// API path no route matches (a 404 whatever the method). The dashboard's
// "GET /" matches every other path.
func (s *Server) allowed(r *http.Request) []string {
	var allow []string
	for _, m := range probeMethods {
		probe := &http.Request{Method: m, URL: r.URL, Host: r.Host}
		if _, pattern := s.mux.Handler(probe); pattern != "" && !strings.HasSuffix(pattern, " "+apiFallback) {
			allow = append(allow, m)
		}
	}
	return allow
}

// noRoute answers an API path no route matches, whatever the method.
func noRoute(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotFound, fmt.Errorf("no API route %s %s", r.Method, errtext.Clip(r.URL.Path, errtext.EchoLimit)))
}

// sameOrigin refuses a write that a browser says comes from another
// site's page: net/http's cross-origin protection trusts Sec-Fetch-Site
// (same-origin or none) when the browser sends it, and otherwise compares
// Origin with Host, port included.
func sameOrigin(r *http.Request) error {
	if err := http.NewCrossOriginProtection().Check(r); err != nil {
		return fmt.Errorf("Sec-Fetch-Site %q, Origin %q: writes come from this server's own pages (http://%s) or from tools (%v)",
			r.Header.Get("Sec-Fetch-Site"), r.Header.Get("Origin"), r.Host, err)
	}
	return nil
}

// allows reports whether r may go on.
func (a access) allows(r *http.Request, write bool) bool {
	switch {
	case a.token == "":
		return true
	case r.URL.Path == loginPath: // the sign-in form, and its answer, which checks the token itself
		return true
	case !write && a.assets[r.URL.Path]:
		return true
	case a.bearer(r):
		return true
	case a.cookie(r):
		// Only a browser holds the cookie, and a browser's write says
		// where it comes from (sameOrigin has checked what it says).
		return !write || r.Header.Get("Origin") != "" || r.Header.Get("Sec-Fetch-Site") != ""
	}
	return !write && a.publicRead
}

func (a access) bearer(r *http.Request) bool {
	got, ok := bearerOf(r)
	return ok && a.matches(got)
}

// bearerOf is the token of an "Authorization: Bearer TOKEN" header.
func bearerOf(r *http.Request) (string, bool) {
	return strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
}

// matches compares in constant time: the answer's timing says nothing
// about how much of a guess was right.
func (a access) matches(token string) bool {
	return subtle.ConstantTimeCompare([]byte(token), []byte(a.token)) == 1
}

func (a access) cookie(r *http.Request) bool {
	c, err := r.Cookie(a.cookieName)
	return err == nil && a.sessions.valid(c.Value)
}

// unauthorized is 401: the sign-in form for a browser asking for a page,
// a JSON error for the API and for writes.
func (s *Server) unauthorized(w http.ResponseWriter, r *http.Request, write bool) {
	switch {
	case !write && !strings.HasPrefix(r.URL.Path, "/api/"):
		s.loginPage(w, http.StatusUnauthorized, r.URL.RequestURI(), false)
	case write && s.access.publicRead:
		writeError(w, http.StatusUnauthorized, errors.New("writes need the header Authorization: Bearer TOKEN (in a browser: sign in at "+loginPath+")"))
	default:
		writeError(w, http.StatusUnauthorized, errors.New("this server needs its token: send the header Authorization: Bearer TOKEN (in a browser: sign in at "+loginPath+")"))
	}
}

// localPath keeps a path on this server ("/" for anything else): the
// form's next field must not send a browser to another site.
func localPath(p string) string {
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "" || u.Host != "" || !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.Contains(p, `\`) {
		return "/"
	}
	return p
}

// hostOnly strips a port from host:port (and brackets from an IPv6 host).
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}
