package server

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"optimize/internal/testkit/studykit"
)

// send makes one request without following redirects.
func send(t *testing.T, method, target string, header map[string]string, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res, string(out)
}

// readPaths are a GET of every API route and of every dashboard page, on
// study s1 and its trial 1.
func readPaths(t *testing.T, srv *Server) []string {
	t.Helper()
	var paths []string
	fill := strings.NewReplacer("{name}", "s1", "{n}", "1")
	for _, r := range srv.apiRoutes() {
		if path, ok := strings.CutPrefix(r.pattern, "GET "); ok {
			if strings.HasPrefix(path, "/api/templates/") {
				path = "/api/templates/slo-cascade"
			}
			paths = append(paths, fill.Replace(path))
		}
	}
	if len(paths) < 10 {
		t.Fatalf("only %d GET routes: %v", len(paths), paths)
	}
	return append(paths, "/", "/study/s1", "/trial/s1/1", "/compare/s1", "/no-such-page")
}

// signIn posts the token to the sign-in form and returns the cookie set.
func signIn(t *testing.T, base, token string) *http.Cookie {
	t.Helper()
	res, _ := send(t, http.MethodPost, base+loginPath, map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": base},
		url.Values{"token": {token}, "next": {"/study/s1"}}.Encode())
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/study/s1" || len(res.Cookies()) != 1 {
		t.Fatalf("sign in: %d to %q with %d cookies; want 303 to /study/s1 with one", res.StatusCode, res.Header.Get("Location"), len(res.Cookies()))
	}
	return res.Cookies()[0]
}

// With a token every page and every API read needs it, as the header or as
// the cookie the sign-in form sets; only the dashboard's own files are
// served without it.
func TestTokenGuardsEveryRoute(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	studykit.RunStudy(t, env, studykit.Study("slo-cascade", "s1", 3))
	srv, err := New(Config{Addr: "127.0.0.1:0", Token: "s3cret", Env: env})
	if err != nil {
		t.Fatal(err)
	}
	ts := newServer(t, env, "127.0.0.1:0", "s3cret")
	cookie := signIn(t, ts.URL, "s3cret")
	if cookie.Value == "" || strings.Contains(cookie.Value, "s3cret") || !cookie.HttpOnly || cookie.SameSite != http.SameSiteLaxMode || cookie.Path != "/" {
		t.Errorf("cookie %+v: want a value other than the token, HttpOnly, SameSite=Lax, Path=/", cookie)
	}
	for _, path := range readPaths(t, srv) {
		res, body := send(t, http.MethodGet, ts.URL+path, nil, "")
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without the token: %d, want 401", path, res.StatusCode)
		}
		if page := !strings.HasPrefix(path, "/api/"); page && !strings.Contains(body, `id="login"`) || !page && !strings.Contains(body, "Authorization: Bearer") {
			t.Errorf("GET %s without the token answers neither the sign-in form nor the header to send: %.200s", path, body)
		}
		for _, wrong := range []map[string]string{{"Authorization": "Bearer s3cre"}, {"Cookie": cookie.Name + "=" + cookie.Value + "x"}, {"Cookie": cookie.Name + "=s3cret"}} {
			if res, _ := send(t, http.MethodGet, ts.URL+path, wrong, ""); res.StatusCode != http.StatusUnauthorized {
				t.Errorf("GET %s with %v: %d, want 401", path, wrong, res.StatusCode)
			}
		}
		want := http.StatusOK
		if strings.HasSuffix(path, "/validation") || strings.HasSuffix(path, "/ablation") || path == "/no-such-page" {
			want = http.StatusNotFound
		}
		for _, right := range []map[string]string{{"Authorization": "Bearer s3cret"}, {"Cookie": cookie.Name + "=" + cookie.Value}} {
			if res, _ := send(t, http.MethodGet, ts.URL+path, right, ""); res.StatusCode != want {
				t.Errorf("GET %s with %v: %d, want %d", path, right, res.StatusCode, want)
			}
		}
	}
	for _, asset := range []string{"/app.js", "/charts.js", "/app.css"} {
		if res, _ := send(t, http.MethodGet, ts.URL+asset, nil, ""); res.StatusCode != http.StatusOK {
			t.Errorf("GET %s without the token: %d, want 200 (the binary's own file)", asset, res.StatusCode)
		}
	}
	// The page asked for is where the form leads back to.
	if _, body := send(t, http.MethodGet, ts.URL+"/study/s1", nil, ""); !strings.Contains(body, `name="next" value="/study/s1"`) {
		t.Errorf("the sign-in form does not lead back to /study/s1: %.400s", body)
	}
	// A write signed in by the cookie is a browser's: it must say where
	// it comes from.
	create := `{"template": "slo-cascade", "trials": 1, "name": "c1"}`
	jsonCookie := map[string]string{"Content-Type": "application/json", "Cookie": cookie.Name + "=" + cookie.Value}
	if res, _ := send(t, http.MethodPost, ts.URL+"/api/studies", jsonCookie, create); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("a cookie write without Origin or Sec-Fetch-Site: %d, want 401", res.StatusCode)
	}
	jsonCookie["Origin"] = ts.URL
	if res, body := send(t, http.MethodPost, ts.URL+"/api/studies", jsonCookie, create); res.StatusCode != http.StatusAccepted {
		t.Errorf("a cookie write from the server's own page: %d %s, want 202", res.StatusCode, body)
	}
}

// The sign-in form: a wrong token is refused with the form again, a
// right one leads only to a page of this server, and servers with
// different tokens keep different cookies.
func TestSignIn(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	ts := newServer(t, env, "127.0.0.1:0", "s3cret")
	form := func(token, next string, header map[string]string) (*http.Response, string) {
		h := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": ts.URL}
		for k, v := range header {
			h[k] = v
		}
		return send(t, http.MethodPost, ts.URL+loginPath, h, url.Values{"token": {token}, "next": {next}}.Encode())
	}
	if res, body := send(t, http.MethodGet, ts.URL+loginPath, nil, ""); res.StatusCode != http.StatusOK || !strings.Contains(body, `type="password"`) {
		t.Errorf("GET /login: %d, no password field", res.StatusCode)
	}
	if res, body := form("wrong", "/", nil); res.StatusCode != http.StatusUnauthorized || !strings.Contains(body, `id="login-error"`) || len(res.Cookies()) != 0 {
		t.Errorf("a wrong token: %d, %d cookies; want 401, the form saying so, no cookie", res.StatusCode, len(res.Cookies()))
	}
	for _, next := range []string{"//evil.example/x", "https://evil.example/", `/\evil.example`, "study/s1", ""} {
		if res, _ := form("s3cret", next, nil); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
			t.Errorf("next %q: %d to %q, want 303 to /", next, res.StatusCode, res.Header.Get("Location"))
		}
	}
	if res, _ := form("s3cret", "/trial/s1/2?x=1", nil); res.Header.Get("Location") != "/trial/s1/2?x=1" {
		t.Errorf("next /trial/s1/2?x=1: to %q", res.Header.Get("Location"))
	}
	if res, _ := form("s3cret", "/", map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}); res.StatusCode != http.StatusForbidden || len(res.Cookies()) != 0 {
		t.Errorf("a sign-in posted from another site: %d, want 403 and no cookie", res.StatusCode)
	}
	other := newServer(t, env, "127.0.0.1:0", "other")
	if a, b := signIn(t, ts.URL, "s3cret"), signIn(t, other.URL, "other"); a.Name == b.Name || a.Value == b.Value {
		t.Errorf("two servers' cookies %s and %s: one would sign the other out", a.Name, b.Name)
	}
	noToken := newServer(t, env, "127.0.0.1:0", "")
	if res, _ := send(t, http.MethodGet, noToken.URL+loginPath, nil, ""); res.StatusCode != http.StatusNotFound {
		t.Errorf("GET /login without a token: %d, want 404 (nothing to sign in to)", res.StatusCode)
	}
}

// --public-read lets reads through; writes still need the token.
func TestPublicRead(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	studykit.RunStudy(t, env, studykit.Study("slo-cascade", "s1", 3))
	if _, err := New(Config{Addr: "127.0.0.1:0", PublicRead: true, Env: env}); err == nil || !strings.Contains(err.Error(), "--public-read") {
		t.Errorf("--public-read without a token: %v", err)
	}
	srv, err := New(Config{Addr: "0.0.0.0:0", Token: "s3cret", PublicRead: true, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	ts := newServer(t, env, "127.0.0.1:0", "s3cret")
	pub := newServerConfig(t, Config{Addr: "0.0.0.0:0", Token: "s3cret", PublicRead: true, Env: env})
	for _, path := range readPaths(t, srv) {
		want := http.StatusOK
		if strings.HasSuffix(path, "/validation") || strings.HasSuffix(path, "/ablation") || path == "/no-such-page" {
			want = http.StatusNotFound
		}
		if res, _ := send(t, http.MethodGet, pub.URL+path, nil, ""); res.StatusCode != want {
			t.Errorf("public read of %s: %d, want %d", path, res.StatusCode, want)
		}
		if res, _ := send(t, http.MethodGet, ts.URL+path, nil, ""); res.StatusCode != http.StatusUnauthorized {
			t.Errorf("the same read without --public-read: %d, want 401", res.StatusCode)
		}
	}
	res, body := send(t, http.MethodPost, pub.URL+"/api/studies", map[string]string{"Content-Type": "application/json"}, `{"template": "slo-cascade", "trials": 1}`)
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "writes need") {
		t.Errorf("a write without the token under --public-read: %d %s", res.StatusCode, body)
	}
}

func newServerConfig(t *testing.T, cfg Config) *httptest.Server {
	t.Helper()
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts
}

// A write is refused when the browser says it comes from another site:
// by Sec-Fetch-Site, with or without an Origin, or by an Origin that is
// not this server (another port is another origin). A tool that sends
// neither is let through.
func TestWritesComeFromThisServer(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	ts := newServer(t, env, "127.0.0.1:0", "")
	u, _ := url.Parse(ts.URL)
	otherPort := "http://" + u.Hostname() + ":1"
	for _, c := range []struct {
		header map[string]string
		want   int
	}{
		{map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{map[string]string{"Sec-Fetch-Site": "same-site"}, http.StatusForbidden},
		{map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "null"}, http.StatusForbidden},
		{map[string]string{"Origin": "null"}, http.StatusForbidden},
		{map[string]string{"Origin": otherPort}, http.StatusForbidden},
		{map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
		// Let through: the resume of an unknown study is then a 404.
		{map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": ts.URL}, http.StatusNotFound},
		{map[string]string{"Sec-Fetch-Site": "none"}, http.StatusNotFound},
		// A form on this server's own pages under Referrer-Policy: no-referrer.
		{map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "null"}, http.StatusNotFound},
		{map[string]string{"Origin": ts.URL}, http.StatusNotFound},
		{map[string]string{}, http.StatusNotFound},
	} {
		c.header["Content-Type"] = "application/json"
		res, body := send(t, http.MethodPost, ts.URL+"/api/studies/ghost/resume", c.header, "")
		if res.StatusCode != c.want {
			t.Errorf("write with %v: %d %s, want %d", c.header, res.StatusCode, body, c.want)
		}
	}
}

// A method no route has is 405 with the methods that have one in Allow,
// before anything else is checked.
func TestUnsupportedMethods(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	studykit.RunStudy(t, env, studykit.Study("slo-cascade", "s1", 2))
	for _, token := range []string{"", "s3cret"} {
		ts := newServer(t, env, "127.0.0.1:0", token)
		for _, c := range []struct{ method, path, allow string }{
			{http.MethodDelete, "/api/studies/s1", "GET, HEAD"},
			{http.MethodPut, "/api/studies", "GET, HEAD, POST"},
			{http.MethodGet, "/api/studies/s1/resume", "POST"},
			{http.MethodPatch, "/api/templates/slo-cascade", "GET, HEAD"},
			{http.MethodDelete, "/", "GET, HEAD"},
			{http.MethodPost, "/study/s1", "GET, HEAD"},
			{"PROPFIND", "/api/studies", "GET, HEAD, POST"},
		} {
			res, body := send(t, c.method, ts.URL+c.path, map[string]string{"Content-Type": "text/plain"}, "")
			if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != c.allow || !strings.Contains(body, "allowed: "+c.allow) {
				t.Errorf("token %q: %s %s: %d, Allow %q, %s; want 405, Allow %q", token, c.method, c.path, res.StatusCode, res.Header.Get("Allow"), body, c.allow)
			}
		}
		if res, _ := send(t, http.MethodDelete, ts.URL+"/api/nothing", map[string]string{"Authorization": "Bearer " + token}, ""); res.StatusCode != http.StatusNotFound {
			t.Errorf("token %q: DELETE of an API path no route has: %d, want 404", token, res.StatusCode)
		}
	}
}

// A comparison names each study once, and at most MaxCompare of them:
// repeats are dropped by a redirect (the page draws the names in its
// address), and one name too many is a one-line 400.
func TestCompareNames(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	studykit.RunStudy(t, env, studykit.Study("slo-cascade", "s1", 2))
	studykit.RunStudy(t, env, studykit.Study("slo-cascade", "s2", 2))
	ts := newServer(t, env, "127.0.0.1:0", "")
	many := strings.TrimSuffix(strings.Repeat("s1,", 10000), ",")
	for _, c := range []struct{ names, location string }{
		{many, "/compare/s1"},
		{"s1,s2,s1,,s2", "/compare/s1,s2"},
	} {
		if res, _ := send(t, http.MethodGet, ts.URL+"/compare/"+c.names, nil, ""); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != c.location {
			t.Errorf("compare %.20s…: %d to %q, want 303 to %s", c.names, res.StatusCode, res.Header.Get("Location"), c.location)
		}
	}
	if res, body := send(t, http.MethodGet, ts.URL+"/compare/s1,s2", nil, ""); res.StatusCode != http.StatusOK || !strings.Contains(body, `"studies/s2/history"`) {
		t.Errorf("compare s1,s2: %d", res.StatusCode)
	}
	names := make([]string, MaxCompare+1)
	for i := range names {
		names[i] = "s" + string(rune('a'+i))
	}
	for _, list := range []string{strings.Join(names, ","), strings.Join(names, ",") + "," + many} {
		res, body := send(t, http.MethodGet, ts.URL+"/compare/"+list, nil, "")
		if res.StatusCode != http.StatusBadRequest || strings.Count(body, "\n") != 1 || !strings.Contains(body, fmt.Sprintf("at most %d", MaxCompare)) {
			t.Errorf("compare %d distinct names: %d %q, want 400 and one line naming the cap", MaxCompare+1, res.StatusCode, body)
		}
	}
	if got, err := compareNames(strings.Join(names[:MaxCompare-1], ",") + "," + many); err != nil || len(got) != MaxCompare {
		t.Errorf("%d distinct names among repeats: %v %v", MaxCompare, got, err)
	}
	if res, _ := send(t, http.MethodGet, ts.URL+"/compare/,", nil, ""); res.StatusCode != http.StatusBadRequest {
		t.Errorf("compare of no name: %d, want 400", res.StatusCode)
	}
}
