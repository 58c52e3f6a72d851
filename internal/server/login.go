package server

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Sessions and guesses.
//
// A browser signs in once with the token and then holds a session cookie:
// "ISSUED.MAC", the MAC an HMAC-SHA256 under the server's session key of
// the issue time and a digest of the token. The key is drawn at random
// when the server starts (Config.SessionKey overrides it, for a key kept
// in a file), so restarting the server, or rotating that key, signs every
// browser out without changing the token; changing the token does too. A
// session lasts SessionLifetime.
//
// Every wrong token (the sign-in form, or an Authorization header) counts
// against the client's address; after loginFree misses in a row each
// further attempt waits (429 with Retry-After) a delay that doubles from
// Config.LoginBackoff up to maxBackoff, and while it waits even the right
// token is not looked at. A right token clears the count.

// SessionLifetime is how long a session cookie signs a browser in.
const SessionLifetime = 24 * time.Hour

// SessionKeyBytes is the size of a session key.
const SessionKeyBytes = 32

// ShortToken is the length under which serve warns that its token is
// guessable: 16 random characters are about 95 bits.
const ShortToken = 16

// loginFree is how many wrong tokens in a row a client gets before it has
// to wait; maxBackoff bounds the wait; maxClients bounds the addresses
// remembered (the oldest is forgotten first).
const (
	loginFree        = 5
	defaultBackoff   = 2 * time.Second
	maxBackoff       = 15 * time.Minute
	maxClients       = 10_000
	forgetClientsAge = time.Hour
)

// NewSessionKey draws a random session key.
func NewSessionKey() []byte {
	key := make([]byte, SessionKeyBytes)
	_, _ = rand.Read(key) // crypto/rand.Read never fails (it crashes the program instead)
	return key
}

// sessions mints and checks session cookies.
type sessions struct {
	key         []byte
	tokenDigest [sha256.Size]byte
	now         func() time.Time
}

func (s sessions) mac(issued string) string {
	h := hmac.New(sha256.New, s.key)
	h.Write([]byte("optimize serve session\x00"))
	h.Write(s.tokenDigest[:])
	h.Write([]byte(issued))
	return hex.EncodeToString(h.Sum(nil))
}

// mint is a new session's cookie value.
func (s sessions) mint() string {
	issued := strconv.FormatInt(s.now().Unix(), 10)
	return issued + "." + s.mac(issued)
}

// valid reports whether value is a session this server minted and that
// has not expired.
func (s sessions) valid(value string) bool {
	issued, mac, ok := strings.Cut(value, ".")
	if !ok {
		return false
	}
	at, err := strconv.ParseInt(issued, 10, 64)
	if err != nil {
		return false
	}
	if age := s.now().Sub(time.Unix(at, 0)); age < -time.Minute || age > SessionLifetime {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(mac), []byte(s.mac(issued))) == 1
}

// guesses counts wrong tokens per client address.
type guesses struct {
	mu      sync.Mutex
	backoff time.Duration
	now     func() time.Time
	by      map[string]*guessState
}

type guessState struct {
	misses int
	until  time.Time // no attempt is looked at before this
	last   time.Time
}

func newGuesses(backoff time.Duration, now func() time.Time) *guesses {
	if backoff <= 0 {
		backoff = defaultBackoff
	}
	return &guesses{backoff: backoff, now: now, by: map[string]*guessState{}}
}

// wait is how long the client must still wait before an attempt is
// looked at; 0 when it may try now.
func (g *guesses) wait(client string) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	if st := g.by[client]; st != nil {
		if d := st.until.Sub(g.now()); d > 0 {
			return d
		}
	}
	return 0
}

// missed records a wrong token from client.
func (g *guesses) missed(client string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	st := g.by[client]
	if st == nil {
		g.forget(now)
		st = &guessState{}
		g.by[client] = st
	}
	st.misses++
	st.last = now
	if over := st.misses - loginFree; over >= 0 {
		d := time.Duration(float64(g.backoff) * math.Pow(2, float64(min(over, 30))))
		st.until = now.Add(min(d, maxBackoff))
	}
}

// succeeded clears client's count.
func (g *guesses) succeeded(client string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.by, client)
}

// forget drops clients quiet for forgetClientsAge and, when the table is
// still full, the longest quiet one, so that many addresses cannot grow
// it without bound.
func (g *guesses) forget(now time.Time) {
	if len(g.by) < maxClients {
		return
	}
	var oldest string
	for client, st := range g.by {
		if now.Sub(st.last) > forgetClientsAge && now.After(st.until) {
			delete(g.by, client)
		} else if oldest == "" || st.last.Before(g.by[oldest].last) {
			oldest = client
		}
	}
	if len(g.by) >= maxClients {
		delete(g.by, oldest)
	}
}

// clientOf is the address a request came from (not a header a client
// could write).
func clientOf(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// tooMany answers 429 with the whole seconds to wait.
func tooMany(w http.ResponseWriter, wait time.Duration) {
	secs := int(math.Ceil(wait.Seconds()))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeError(w, http.StatusTooManyRequests, fmt.Errorf("too many wrong tokens from this address: try again in %d s", secs))
}

var loginHTML = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>optimize · sign in</title>
<link rel="stylesheet" href="/app.css">
<link rel="icon" href="data:,">
</head>
<body>
<header><a class="brand" href="/">optimize</a></header>
<main>
<section class="card">
<h1>Sign in</h1>
<p class="sub">This server is shared: give the token it was started with (<code>--token</code> or <code>$OPTIMIZE_TOKEN</code>).</p>
{{if .Wrong}}<p class="error" id="login-error">That is not this server's token.</p>{{end}}
<form class="create" id="login" method="post" action="/login">
<input type="hidden" name="next" value="{{.Next}}">
<input type="password" name="token" aria-label="token" autocomplete="current-password" required autofocus>
<button type="submit">sign in</button>
</form>
</section>
</main>
</body>
</html>
`))

// loginPage is the sign-in form; next is where a right token leads.
func (s *Server) loginPage(w http.ResponseWriter, status int, next string, wrong bool) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = loginHTML.Execute(w, struct {
		Next  string
		Wrong bool
	}{localPath(next), wrong})
}

// login checks the form's token; a right one sets a new session cookie
// (HttpOnly: no script reads it; SameSite=Lax: no other site's write
// carries it; it expires with the session) and goes on to the page asked
// for. A client that guessed wrong too often waits first.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	client := clientOf(r)
	if wait := s.access.guesses.wait(client); wait > 0 {
		tooMany(w, wait)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			err = fmt.Errorf("the form is larger than %d bytes", mbe.Limit)
		}
		writeError(w, http.StatusBadRequest, fmt.Errorf("sign in: %v", err))
		return
	}
	next := localPath(r.PostForm.Get("next"))
	if !s.access.matches(r.PostForm.Get("token")) {
		s.access.guesses.missed(client)
		s.loginPage(w, http.StatusUnauthorized, next, true)
		return
	}
	s.access.guesses.succeeded(client)
	http.SetCookie(w, &http.Cookie{Name: s.access.cookieName, Value: s.access.sessions.mint(), Path: "/",
		MaxAge: int(SessionLifetime / time.Second), HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
	http.Redirect(w, r, next, http.StatusSeeOther)
}
