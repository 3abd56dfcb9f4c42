// Command kolco-article reruns every measurement of the article this
// project reproduces, "Консистентное хеширование: кольцо хешей,
// виртуальные узлы и код на Python", and prints its tables with its
// rounding: what `kolco sim article` prints, from a program that imports
// the simulator alone, so that a first `go run` compiles in seconds
// rather than minutes (the kolco command links the proxy, the etcd client
// and the plotting library too).
//
//	go run ./cmd/kolco-article        # the tables
//	go run ./cmd/kolco-article -json  # the figures, for a program
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/kolco-dev/kolco/sim/article"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run runs the command with args and returns its exit status: 0, 1 for a
// failure, 2 for a usage error.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kolco-article", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the figures as JSON")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "kolco-article: no arguments are taken (got %q)\n", fs.Arg(0))
		return 2
	}
	figures, err := article.Run(nil)
	if err == nil {
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			err = enc.Encode(figures)
		} else {
			err = figures.WriteText(stdout)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "kolco-article: %v\n", err)
		return 1
	}
	return 0
}
