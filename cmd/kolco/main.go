// Command kolco places keys on nodes and measures what a change of
// membership costs. Run "kolco help" for the subcommands.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

func main() {
	os.Exit(runProgram(os.Args[0], os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// runProgram runs the command line of the program started as argv0: kolco,
// or, installed as nutcracker, the proxy with nutcracker's command line.
func runProgram(argv0 string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if isNutcracker(argv0) {
		return execute(newNutcrackerCmd(), args, stdin, stdout, stderr)
	}
	return run(args, stdin, stdout, stderr)
}

// usageError marks a mistake in how the command was called: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef returns a usageError with a formatted message.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// run executes the command line and returns the exit status: 0 on success,
// 2 for a usage error, 1 for a failure while running. Errors are printed as
// one line on stderr.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return execute(newRootCmd(), args, stdin, stdout, stderr)
}

// execute runs root with args, as run does.
func execute(root *cobra.Command, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	flagNotesTo(root, stderr)
	started := false
	markStart(root, &started)
	err := root.Execute()
	if err == nil {
		return 0
	}
	msg := strings.Join(strings.Fields(err.Error()), " ")
	// The library's sentinels carry the program's name as their prefix,
	// wherever they are wrapped; say it once, in front.
	msg = strings.TrimPrefix(strings.ReplaceAll(msg, ": kolco: ", ": "), "kolco: ")
	fmt.Fprintf(stderr, "kolco: %s\n", msg)
	// Errors before a command starts come from cobra itself: unknown
	// commands and flags, bad flag values, wrong argument counts.
	var ue usageError
	if !started || errors.As(err, &ue) {
		return 2
	}
	return 1
}

// flagNotesTo sends what pflag says while it parses the flags of cmd and of
// every command below it (the notice of a deprecated flag) to w: cobra
// prints it on the command's output, stdout, where it would mix with the
// results a pipe reads.
func flagNotesTo(cmd *cobra.Command, w io.Writer) {
	cmd.Flags().SetOutput(w)
	for _, c := range cmd.Commands() {
		flagNotesTo(c, w)
	}
}

// markStart wraps the RunE of cmd and of every command below it so that
// started is set once a command body runs: an error before that comes from
// cobra itself (unknown commands and flags, bad flag values, wrong argument
// counts) and is a usage error. Wrapping every command, rather than relying
// on a root persistent hook, keeps this true for subcommands with hooks of
// their own.
func markStart(cmd *cobra.Command, started *bool) {
	if run := cmd.RunE; run != nil {
		cmd.RunE = func(c *cobra.Command, args []string) error {
			*started = true
			return run(c, args)
		}
	}
	for _, sub := range cmd.Commands() {
		markStart(sub, started)
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "kolco",
		Short: "Consistent hashing: place keys on nodes and measure what a change costs",
		Long: `kolco places keys on nodes with a consistent hash ring or any other
placement algorithm (rendezvous, jump, maglev, hash slots, bounded loads, ...),
or exactly as another system would (twemproxy, libmemcached, nginx, HAProxy,
Redis Cluster, ...), and measures what a change of membership costs: keys
moved, load per node, the database's extra load.

  kolco locate --nodes a,b,c < keys.txt     # the owner of each key
  kolco sim article                         # rerun the article's measurements
  kolco plan --nodes-file nodes.txt --add n11 --keys 1000000
                                            # what a change would move and cost
  kolco proxy --config nutcracker.yml       # a memcached and Redis sharding proxy`,
		Args:          cobra.ArbitraryArgs, // groupCmd names the nearest command
		RunE:          groupCmd,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.Version = versionText()
	root.SetVersionTemplate("{{.Version}}")
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(newLocateCmd(), newSimCmd())
	root.AddCommand(newPlanCmd(), newProxyCmd(), newVersionCmd())
	root.AddCommand(newMembersCmd(), newStatusCmd())
	explainArgs(root)
	return root
}
