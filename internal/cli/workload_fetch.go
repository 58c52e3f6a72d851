package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"optimize/strategies/datasets"
)

func newWorkloadFetch(s Streams) *cobra.Command {
	var mirror string
	var list bool
	cmd := &cobra.Command{
		Use:   "fetch NAME...",
		Short: "Download public traces (datasets) into the cache, checked against their pinned SHA-256",
		Long: `Download datasets — the public traces that run as built-in workloads
(` + strings.Join(datasets.Names(), ", ") + `) — into the cache:
$` + datasets.CacheEnv + ` if set, else the user cache folder's optimize/
(~/.cache/optimize on Linux), each at datasets/NAME/<upstream file name>.
A dataset is downloaded from its public URL (a file at a pinned commit of
its repository), or from --mirror / $` + datasets.MirrorEnv + ` (a base URL under
which the upstream file name is looked up), and kept only when its size
and SHA-256 are the ones pinned in the catalog. A dataset already fetched
is checked and not downloaded again. --list shows which are fetched, with
their source and licence.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				if len(args) > 0 {
					return fmt.Errorf("workload fetch: --list takes no dataset names (got %s)", strings.Join(args, " "))
				}
				return failed(writeDatasetList(s.Out))
			}
			if len(args) == 0 {
				return fmt.Errorf("workload fetch: name a dataset (%s), or --list", strings.Join(datasets.Names(), ", "))
			}
			var want []datasets.Dataset
			for _, name := range args {
				d, ok := datasets.Lookup(name)
				if !ok {
					return fmt.Errorf("workload fetch: unknown dataset %q (datasets: %s)", name, strings.Join(datasets.Names(), ", "))
				}
				want = append(want, d)
			}
			flag := "--mirror"
			if !changed(cmd.Flags(), "mirror") {
				mirror, flag = os.Getenv(datasets.MirrorEnv), "$"+datasets.MirrorEnv
			}
			if mirror != "" {
				if err := datasets.CheckMirror(mirror); err != nil {
					return fmt.Errorf("%s: %v", flag, err)
				}
			}
			cache, err := datasets.CacheDir()
			if err != nil {
				return failed(err)
			}
			for _, d := range want {
				res, err := datasets.Fetch(cmd.Context(), d, cache, mirror)
				if err != nil {
					return failed(err)
				}
				writeFetched(s.Out, d, res)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&mirror, "mirror", "", "base URL to download from instead of the public URLs (the upstream file name is looked up under it; default $"+datasets.MirrorEnv+")")
	cmd.Flags().BoolVar(&list, "list", false, "list the datasets and which are fetched, instead of fetching")
	return cmd
}

// writeFetched says where a dataset went, under which licence, and what
// to cite.
func writeFetched(w io.Writer, d datasets.Dataset, res datasets.FetchResult) {
	if res.Downloaded {
		fmt.Fprintf(w, "%s: downloaded %s from %s, sha256 %s verified\n", d.Name, d.SizeText(), res.From, d.SHA256)
	} else {
		fmt.Fprintf(w, "%s: already fetched, sha256 %s verified; not downloaded again\n", d.Name, d.SHA256)
	}
	fmt.Fprintf(w, "  file      %s\n", res.Path)
	fmt.Fprintf(w, "  source    %s, %s at commit %s\n", d.Source(), d.Path, d.Commit)
	fmt.Fprintf(w, "  licence   %s: %s\n", d.Licence, d.Notice)
	fmt.Fprintf(w, "  cite      %s\n", d.Citation)
}

// writeDatasetList is `workload fetch --list`: every dataset, fetched or
// not, with its source and licence.
func writeDatasetList(w io.Writer) error {
	if cache, err := datasets.CacheDir(); err == nil {
		fmt.Fprintf(w, "cache: %s\n", cache)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATUS\tSIZE\tROWS\tFORMAT\tLICENCE\tSOURCE")
	for _, d := range datasets.All() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s/%s @%s\n", d.Name, fetchStatus(d), d.SizeText(), d.Rows, d.Format, d.Licence, d.Source(), d.Path, d.Commit[:8])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// The notices and citations, once for the datasets that share them.
	var order []string
	names := map[string][]string{}
	for _, d := range datasets.All() {
		key := d.Notice + "\n" + d.Citation
		if names[key] == nil {
			order = append(order, key)
		}
		names[key] = append(names[key], d.Name)
	}
	for _, key := range order {
		notice, citation, _ := strings.Cut(key, "\n")
		fmt.Fprintf(w, "\n%s: %s.\n  cite: %s\n", strings.Join(names[key], ", "), notice, citation)
	}
	return nil
}

// fetchStatus is "fetched" or "not fetched".
func fetchStatus(d datasets.Dataset) string {
	if datasets.Fetched(d) {
		return "fetched"
	}
	return "not fetched"
}
