package server

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"optimize/internal/testkit/studykit"
)

// loginForm posts token to the sign-in form of base.
func loginForm(t *testing.T, base, token string) *http.Response {
	t.Helper()
	res, _ := send(t, http.MethodPost, base+loginPath, map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": base},
		url.Values{"token": {token}, "next": {"/"}}.Encode())
	return res
}

// 50 wrong tokens from one client: after the free ones every attempt is
// 429 with Retry-After, the right token included, until the wait is over;
// then the right token signs in. Wrong bearer tokens count the same way.
func TestLoginGuessesWait(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	const token = "a-token-of-24-characters"
	ts := newServerConfig(t, Config{Addr: "127.0.0.1:0", Token: token, LoginBackoff: time.Second, Env: env})
	first429, retry := 0, 0
	for i := 1; i <= 50; i++ {
		res := loginForm(t, ts.URL, "guess-"+strconv.Itoa(i))
		switch res.StatusCode {
		case http.StatusUnauthorized:
			if first429 > 0 {
				t.Fatalf("attempt %d: 401 after a 429 at %d: the wait was not kept", i, first429)
			}
		case http.StatusTooManyRequests:
			if first429 == 0 {
				first429 = i
				retry, _ = strconv.Atoi(res.Header.Get("Retry-After"))
			}
		default:
			t.Fatalf("attempt %d: %d", i, res.StatusCode)
		}
	}
	if first429 == 0 || first429 > 10 {
		t.Fatalf("the first 429 came at attempt %d of 50, want within the first 10", first429)
	}
	if retry < 1 {
		t.Errorf("Retry-After %d, want whole seconds ≥ 1", retry)
	}
	if res := loginForm(t, ts.URL, token); res.StatusCode != http.StatusTooManyRequests {
		t.Errorf("the right token during the wait: %d, want 429 (nothing is checked while a client waits)", res.StatusCode)
	}
	time.Sleep(time.Duration(retry)*time.Second + 100*time.Millisecond)
	res := loginForm(t, ts.URL, token)
	if res.StatusCode != http.StatusSeeOther || len(res.Cookies()) != 1 {
		t.Fatalf("the right token after the wait: %d with %d cookies, want 303 and a session", res.StatusCode, len(res.Cookies()))
	}
	// The right token cleared the count: wrong bearer tokens start again
	// from the free ones, and end in 429 the same way.
	codes := []int{}
	for range 7 {
		r, _ := send(t, http.MethodGet, ts.URL+"/api/studies", map[string]string{"Authorization": "Bearer wrong"}, "")
		codes = append(codes, r.StatusCode)
	}
	if codes[0] != http.StatusUnauthorized || codes[6] != http.StatusTooManyRequests {
		t.Errorf("wrong bearer tokens answered %v; want 401 first and 429 by the seventh", codes)
	}
}

// A session is signed by the server's key: a restart (a new key) signs the
// browser out while the token stays the same; a key kept across the
// restart keeps it signed in; a forged or expired cookie is refused.
func TestRestartRevokesSessions(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	const token = "a-token-of-24-characters"
	studyList := func(base string, c *http.Cookie) int {
		res, _ := send(t, http.MethodGet, base+"/api/studies", map[string]string{"Cookie": c.String()}, "")
		return res.StatusCode
	}
	before := newServerConfig(t, Config{Addr: "127.0.0.1:0", Token: token, Env: env})
	cookie := signIn(t, before.URL, token)
	if code := studyList(before.URL, cookie); code != http.StatusOK {
		t.Fatalf("signed in: %d", code)
	}
	restarted := newServerConfig(t, Config{Addr: "127.0.0.1:0", Token: token, Env: env})
	if code := studyList(restarted.URL, cookie); code != http.StatusUnauthorized {
		t.Errorf("the old session after a restart: %d, want 401", code)
	}
	key := NewSessionKey()
	kept := newServerConfig(t, Config{Addr: "127.0.0.1:0", Token: token, SessionKey: key, Env: env})
	cookie = signIn(t, kept.URL, token)
	again := newServerConfig(t, Config{Addr: "127.0.0.1:0", Token: token, SessionKey: key, Env: env})
	if code := studyList(again.URL, cookie); code != http.StatusOK {
		t.Errorf("a session after a restart with the same key: %d, want 200", code)
	}
	otherToken := newServerConfig(t, Config{Addr: "127.0.0.1:0", Token: token + "-new", SessionKey: key, Env: env})
	renamed := *cookie
	renamed.Name = newAccess(Config{Token: token + "-new", SessionKey: key}).cookieName
	if code := studyList(otherToken.URL, &renamed); code != http.StatusUnauthorized {
		t.Errorf("a session under the old token, after the token changed (same key): %d, want 401", code)
	}
	issued, _, _ := strings.Cut(cookie.Value, ".")
	for _, forged := range []string{issued + "." + strings.Repeat("0", 64), "0." + strings.Repeat("a", 64), cookie.Value + "x", ""} {
		c := *cookie
		c.Value = forged
		if code := studyList(again.URL, &c); code != http.StatusUnauthorized {
			t.Errorf("a forged session %q: %d, want 401", forged, code)
		}
	}
	s := sessions{key: key, now: func() time.Time { return time.Now().Add(SessionLifetime + time.Minute) }}
	if s.valid(s.mint()) != true {
		t.Errorf("a fresh session is not valid")
	}
	old := sessions{key: key, now: time.Now}
	stale := old.mint()
	if s.valid(stale) {
		t.Errorf("a session older than %v is still valid", SessionLifetime)
	}
}
