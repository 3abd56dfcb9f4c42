package main

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// versionText returns the program's version and build: the module
// version, the VCS revision and time when known, and the Go toolchain.
func versionText() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return fmt.Sprintf("kolco (no build information)\n%s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	}
	s := fmt.Sprintf("kolco %s", bi.Main.Version)
	vcs := map[string]string{}
	for _, kv := range bi.Settings {
		vcs[kv.Key] = kv.Value
	}
	if rev := vcs["vcs.revision"]; rev != "" {
		s += " " + rev
		if t := vcs["vcs.time"]; t != "" {
			s += " " + t
		}
		if vcs["vcs.modified"] == "true" {
			s += " (modified)"
		}
	}
	return fmt.Sprintf("%s\n%s %s %s/%s\n", s, bi.Main.Path, bi.GoVersion, runtime.GOOS, runtime.GOARCH)
}

func printVersion(w io.Writer) error {
	_, err := io.WriteString(w, versionText())
	return err
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and build information",
		Long: `Print kolco's version, the revision it was built from and the Go toolchain,
as "kolco --version" does.

  $ kolco version
  kolco v0.1.0 ...
  github.com/kolco-dev/kolco go1.26.0 linux/amd64`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return printVersion(cmd.OutOrStdout()) },
	}
}

// isNutcracker reports whether the program was started under the name
// nutcracker (kolco installed as a symlink named nutcracker): it then is
// the proxy, with nutcracker's command line and defaults.
func isNutcracker(argv0 string) bool { return filepath.Base(argv0) == "nutcracker" }

// newNutcrackerCmd returns the proxy command as nutcracker.
func newNutcrackerCmd() *cobra.Command {
	cmd := proxyCommand(&proxyFlags{nutcracker: true})
	cmd.Use = "nutcracker [-c conf-file] [-s stats-port] [-a stats-addr] [-i stats-interval] [-v level] [-o output] [-p pid-file] [-dDtV]"
	cmd.Short = "kolco proxy, run as nutcracker: nutcracker's command line and defaults"
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetFlagErrorFunc(flagError)
	return cmd
}
