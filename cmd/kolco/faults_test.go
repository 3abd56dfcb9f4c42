package main

import (
	"os/exec"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/faults"
)

// TestFaultSchedule runs the fault schedules of package internal/faults
// against "kolco proxy" processes: a combination of the options users run
// and a schedule of faults drawn from each seed, the clients' histories
// checked. Without the environment variables of faults.FromEnv it runs a
// few short seeds; KOLCO_FAULTS_SEED=N replays one, KOLCO_FAULTS_SEEDS=200
// runs 200 long ones, KOLCO_FAULTS_UNTIL=30m runs until one fails.
func TestFaultSchedule(t *testing.T) {
	if testing.Short() {
		t.Skip("the fault schedules start real servers and proxies for seconds each")
	}
	cfg, err := faults.FromEnv(faults.Short{Seeds: []uint64{1, 2, 3, 5}, Length: 10 * time.Second}, "TestFaultSchedule")
	if err != nil {
		t.Fatal(err)
	}
	faults.Run(t, faults.Env{Kolco: func(args ...string) *exec.Cmd { return program(t, "kolco", args...) }, Reaper: true}, cfg)
}
