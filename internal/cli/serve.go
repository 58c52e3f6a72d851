package cli

import (
	"fmt"
	"net"
	"os"
	"runtime"

	"github.com/spf13/cobra"

	"optimize/internal/server"
	"optimize/storage"
)

// TokenVar names the environment variable that can hold serve's token.
const TokenVar = "OPTIMIZE_TOKEN"

func newServeCommand(s Streams, templatesDir *string) *cobra.Command {
	f := &studyFlags{templatesDir: templatesDir}
	var addr, token string
	var publicRead bool
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
			env, err := f.env(s)
			if err != nil {
				return studyError(err)
			}
			defer env.Store.Close()
			srv, err := server.New(server.Config{Addr: addr, Token: token, PublicRead: publicRead, Env: env, Log: s.Err})
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return failed(fmt.Errorf("--addr %s: %v", addr, err))
			}
			fmt.Fprintf(s.Err, "serving %s on http://%s (Ctrl-C stops)\n", env.Store.Label, ln.Addr())
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
	cmd.Flags().StringVar(&f.storage, "storage", "", "sqlite:///PATH, a file path or postgres://user:pass@host:port/db (default $OPTIMIZE_STORAGE or ./optimize.db)")
	cmd.Flags().IntVar(&f.workers, "workers", runtime.NumCPU(), "trials each study started here runs at once")
	bindLease(cmd, f)
	return cmd
}
