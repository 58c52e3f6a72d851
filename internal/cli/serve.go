package cli

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"optimize/internal/server"
	"optimize/storage"
)

// TokenVar names the environment variable that can hold serve's token.
const TokenVar = "OPTIMIZE_TOKEN"

func newServeCommand(s Streams, templatesDir *string) *cobra.Command {
	f := &studyFlags{templatesDir: templatesDir}
	var addr, token, dataDir, keyFile string
	var publicRead, newKey bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the JSON API and the web dashboard over the study storage",
		Long: `Serve the JSON API (bodies are exactly the CLI's --output json for the same
question) and the web dashboard at /. Studies created or resumed through
the API run in this server (--workers trials at once); worker processes
on the same storage contribute as usual. The server binds loopback by
default; a non-loopback --addr needs --token (or $` + TokenVar + `). With a
token every request needs it: "Authorization: Bearer TOKEN" from tools, or
a browser signs in once at /login (a session cookie); --public-read lets
reads through without it. Writes from another site's page are refused.
A client that sends wrong tokens waits (429) after 5 in a row. Restarting
the server signs every browser out (a new session key), unless
--session-key-file keeps the key. A request names built-in workloads and
traces, or files under --data-dir (none by default): no other file is
opened for it. --max-trials, --max-seeds, --max-requests and
--max-running-studies bound what a request may ask for.
Ctrl-C or SIGTERM stops it cleanly: trials in flight finish and are
recorded. A PostgreSQL server that goes away is waited for, up to $` + storage.RetryWindowVar + ` (default ` + storage.DefaultRetryWindow.String() + `).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if token == "" {
				token = os.Getenv(TokenVar)
			}
			if err := f.checkRunFlags("workers", 1); err != nil {
				return err
			}
			if err := f.limits.Bad(); err != nil {
				return err
			}
			if newKey && keyFile == "" {
				return fmt.Errorf("--new-session-key: needs --session-key-file (without it every start draws a new key)")
			}
			var key []byte
			if keyFile != "" {
				var err error
				if key, err = sessionKey(keyFile, newKey); err != nil {
					return err
				}
			}
			env, err := f.env(s)
			if err != nil {
				return studyError(err)
			}
			defer env.Store.Close()
			srv, err := server.New(server.Config{Addr: addr, Token: token, PublicRead: publicRead, DataDir: dataDir, SessionKey: key, Env: env, Log: s.Err})
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return failed(fmt.Errorf("--addr %s: %v", addr, err))
			}
			fmt.Fprintf(s.Err, "serving %s on http://%s (Ctrl-C stops)\n", env.Store.Label, ln.Addr())
			if w := tokenWarning(token); w != "" {
				fmt.Fprintln(s.Err, w)
			}
			if token != "" {
				reads := "every request needs the token"
				if publicRead {
					reads = "writes need the token"
				}
				fmt.Fprintf(s.Err, "%s: tools send Authorization: Bearer TOKEN, a browser signs in at http://%s%s\n", reads, ln.Addr(), "/login")
			}
			ctx, stop := interruptible()
			defer stop()
			return failed(srv.Serve(ctx, ln))
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "host:port to listen on (loopback unless a token is given)")
	cmd.Flags().StringVar(&token, "token", "", "token every request must carry (default $"+TokenVar+"); browsers sign in at /login")
	cmd.Flags().BoolVar(&publicRead, "public-read", false, "with --token: let GET requests (dashboard and API reads) through without it; writes still need it")
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "the directory whose workload spec and trace files requests may name (relative to it, no links out of it); none by default: built-ins only")
	cmd.Flags().StringVar(&keyFile, "session-key-file", "", "keep the key that signs browser sessions in this file (made, mode 0600, if missing), so sessions survive a restart; default: a new key every start")
	cmd.Flags().BoolVar(&newKey, "new-session-key", false, "with --session-key-file: write a new key into it first, signing every browser out")
	bindLimits(cmd.Flags(), &f.limits)
	cmd.Flags().StringVar(&f.storage, "storage", "", "sqlite:///PATH, a file path or postgres://user:pass@host:port/db (default $OPTIMIZE_STORAGE or ./optimize.db)")
	cmd.Flags().IntVar(&f.workers, "workers", runtime.NumCPU(), "trials each study started here runs at once")
	bindLease(cmd, f)
	return cmd
}

// sessionKey reads the session key kept in file, writing a new one first
// when the file is missing or fresh is set.
func sessionKey(file string, fresh bool) ([]byte, error) {
	if !fresh {
		text, err := os.ReadFile(file)
		if err == nil {
			key, err := hex.DecodeString(strings.TrimSpace(string(text)))
			if err != nil || len(key) < server.SessionKeyBytes {
				return nil, fmt.Errorf("--session-key-file %s: not a session key (%d hex digits expected; --new-session-key writes one)", file, 2*server.SessionKeyBytes)
			}
			return key, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("--session-key-file: %v", err)
		}
	}
	key := server.NewSessionKey()
	err := os.WriteFile(file, []byte(hex.EncodeToString(key)+"\n"), 0o600)
	if err == nil {
		err = os.Chmod(file, 0o600) // WriteFile keeps an existing file's mode
	}
	if err != nil {
		return nil, fmt.Errorf("--session-key-file: %v", err)
	}
	return key, nil
}

// tokenWarning warns of a token short enough to guess, "" for none.
func tokenWarning(token string) string {
	if token == "" || len(token) >= server.ShortToken {
		return ""
	}
	return fmt.Sprintf("warning: the token is %d characters: one under %d can be guessed; use a random one, e.g. head -c 24 /dev/urandom | base64", len(token), server.ShortToken)
}
