package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kolco-dev/kolco/internal/suggest"
)

// The command line's mistakes are answered with the nearest name the
// command has and where to read more, as one line: "unknown flag --nodse;
// (did you mean --nodes?); see 'kolco locate --help'".

// seeHelp returns the pointer to cmd's help that ends a usage error.
func seeHelp(cmd *cobra.Command) string {
	return fmt.Sprintf("see '%s --help'", cmd.CommandPath())
}

// flagError is every command's FlagErrorFunc: an unknown flag gets the
// nearest flag name, and every flag error the pointer to the help.
func flagError(cmd *cobra.Command, err error) error {
	var ne *pflag.NotExistError
	if errors.As(err, &ne) && ne.GetSpecifiedShortnames() == "" {
		var names []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
		cmd.InheritedFlags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
		if near := nearest(ne.GetSpecifiedName(), names); near != "" {
			return usagef("unknown flag --%s (did you mean --%s?); %s", ne.GetSpecifiedName(), near, seeHelp(cmd))
		}
		return usagef("unknown flag --%s; %s", ne.GetSpecifiedName(), seeHelp(cmd))
	}
	return usagef("%w; %s", err, seeHelp(cmd))
}

// explainArgs wraps the argument check of cmd and of every command below
// it, so that a refused argument is explained: a subcommand's name
// misspelt, a node list given without --nodes.
func explainArgs(cmd *cobra.Command) {
	if check := cmd.Args; check != nil {
		cmd.Args = func(c *cobra.Command, args []string) error {
			if err := check(c, args); err != nil {
				return argsError(c, args, err)
			}
			return nil
		}
	}
	for _, sub := range cmd.Commands() {
		explainArgs(sub)
	}
}

// argsError returns the usage error for args that cmd refused with err.
func argsError(cmd *cobra.Command, args []string, err error) error {
	if len(args) == 0 || cmd.HasSubCommands() {
		return usagef("%w; %s", err, seeHelp(cmd))
	}
	arg := args[0]
	if cmd.Flags().Lookup("nodes") != nil && !strings.HasPrefix(arg, "-") && strings.Contains(arg, ",") {
		return usagef("unexpected argument %q: to place keys on these nodes, give --nodes %s; %s", arg, arg, seeHelp(cmd))
	}
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	if near := nearest(strings.TrimLeft(arg, "-"), names); near != "" {
		return usagef("unexpected argument %q (did you mean --%s?); %s", arg, near, seeHelp(cmd))
	}
	return usagef("unexpected argument %q: %s takes none; %s", arg, cmd.CommandPath(), seeHelp(cmd))
}

// groupCmd returns the RunE of a command that only groups subcommands:
// alone it prints its help; with an argument that names no subcommand it
// is a usage error naming the nearest subcommand, not a silent success.
func groupCmd(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cmd.Help()
	}
	var names []string
	for _, sub := range cmd.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	if near := nearest(args[0], names); near != "" {
		return usagef("unknown command %q for %q (did you mean %q?); %s", args[0], cmd.CommandPath(), near, seeHelp(cmd))
	}
	return usagef("unknown command %q for %q; %s", args[0], cmd.CommandPath(), seeHelp(cmd))
}

// unknownName returns the usage error for a value of flag (such as
// "--algo") that names none of known: the nearest name, if one is near,
// and the list of them.
func unknownName(flag, typed string, known []string) error {
	if near := nearest(typed, known); near != "" {
		return usagef("unknown %s %q (did you mean %s?); known: %s", flag, typed, near, strings.Join(known, ", "))
	}
	return usagef("unknown %s %q; known: %s", flag, typed, strings.Join(known, ", "))
}

// nearest returns the name of names closest to typed (see suggest.Nearest).
func nearest(typed string, names []string) string { return suggest.Nearest(typed, names) }
