package escalate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/roster"
	"github.com/teamkit/teamkit/pkg/runstream"
	"github.com/teamkit/teamkit/pkg/text"
)

// Wake on mail: each pass re-spawns the team's wake agents (spawn --wake,
// type.conf wake=mail) that have mail no run of theirs has covered, when
// wakeable says they may be. One burst of mail wakes an agent once: the
// pass that wins mailbox.DB.ClaimWake (a compare-and-set on the agent's
// record, against its last run) re-spawns it; every other pass, here or on
// another host, sees the claim and does nothing.

// WakeTask is the task of a run woken by mail: its briefing says new mail
// is waiting and how to read it.
func WakeTask(team, name string) string {
	return fmt.Sprintf("New mail is waiting: drain your inbox (`inbox %s %s`) and act on each message.", team, name)
}

// KindWake is Woke's kind, beside the asks' kinds and KindPark: resume
// --json writes all of them to one stream.
const KindWake = "wake"

// Woke is one agent re-spawned for its mail.
type Woke struct {
	Kind         string  `json:"kind"` // always KindWake
	Team         string  `json:"team"`
	Agent        string  `json:"agent"`
	Mail         int64   `json:"mail"` // the newest message the wake covers
	Status       string  `json:"status"`
	AfterSeconds float64 `json:"after_seconds"`
	Run          string  `json:"run"`
	ExitCode     *int    `json:"exit_code"`
	Log          string  `json:"log,omitempty"`
}

// wakeable is THE check of whether wake agent a, with mail waiting, may be
// re-spawned for it now: its last run ended normally (its run record says
// done, or, without one, it exited with code 0), on this host, and it
// awaits no human (asked: an open ask, or an answer not yet delivered,
// which a re-spawn of its own carries). A run stopped by `spawn stop`
// (end=stopped), failed, still running or queued is left alone, and so is
// one that is parked or failing (roster.Respawnable, as of now). Any
// further state that forbids a re-spawn belongs here.
func wakeable(a mailbox.Agent, rec *mailbox.RunRecord, asked bool, host string, now time.Time) bool {
	if a.Wake != mailbox.WakeMail || a.Host != host || asked || a.State != mailbox.StateExited {
		return false
	}
	if ok, _ := roster.Respawnable(a, now); !ok {
		return false
	}
	if rec != nil && rec.End != "" {
		return rec.End == runstream.EndDone
	}
	return a.ExitCode != nil && *a.ExitCode == 0
}

// wake starts a re-spawn of each wakeable agent with mail waiting, whose
// wake this pass claims.
func (p *pass) wake() error {
	r, ctx := p.r, p.ctx
	cands, err := r.DB.WakeCandidates(ctx, r.Team)
	if err != nil || len(cands) == 0 {
		return err
	}
	asked := map[string]bool{}
	for _, state := range []string{mailbox.AskAwaiting, mailbox.AskAnswered} {
		asks, err := r.DB.Asks(ctx, r.Team, state)
		if err != nil {
			return err
		}
		for _, a := range asks {
			if a.State == mailbox.AskAwaiting || a.ResumedRun == "" {
				asked[a.Agent] = true
			}
		}
	}
	for _, c := range cands {
		a := c.Agent
		var rec *mailbox.RunRecord
		if a.Run != "" {
			rr, err := r.DB.Run(ctx, a.Team, a.Run)
			switch {
			case err == nil:
				rec = &rr
			case !errors.Is(err, mailbox.ErrNotFound):
				return err
			case a.State == mailbox.StateExited && a.PID == 0 && a.ExitCode == nil:
				// Its latest launch never ran: called off in the host's
				// queue (a resume interrupted while its re-spawn waited).
				// It is judged by the last run that did.
				if rec, err = lastRun(ctx, r.DB, a); err != nil {
					return err
				}
			}
		}
		if !wakeable(a, rec, asked[a.Name], r.Host, r.now()) {
			continue
		}
		won, err := r.DB.ClaimWake(ctx, c)
		if err != nil {
			return err
		}
		if won {
			p.startWake(c)
		}
	}
	return nil
}

// lastRun is the record of a's latest run that started, nil when none did.
func lastRun(ctx context.Context, db *mailbox.DB, a mailbox.Agent) (*mailbox.RunRecord, error) {
	runs, err := db.Runs(ctx, a.Team, a.Name, time.Time{})
	if err != nil || len(runs) == 0 {
		return nil, err
	}
	return &runs[len(runs)-1], nil
}

// startWake re-spawns c's agent, whose wake for the mail up to c.Newest
// this pass claimed, in the background like an answer's re-spawn (start).
func (p *pass) startWake(c mailbox.WakeCandidate) {
	release := func() error { return p.r.DB.ReleaseWake(context.WithoutCancel(p.ctx), c) }
	p.mu.Lock()
	p.goLocked(c.Agent.Team, c.Agent.Name, func() error { return p.respawnWake(c) }, release)
}

// respawnWake starts a again with the type, issue, workdir and wake of its
// last spawn and WakeTask. A re-spawn that did not start gives the claim
// back, so that a later pass wakes it.
func (p *pass) respawnWake(c mailbox.WakeCandidate) error {
	r, ctx, a := p.r, p.ctx, c.Agent
	cont, err := p.continuation(a, WakeTask(a.Team, a.Name))
	if err != nil {
		return err
	}
	res, err := r.Spawn(ctx, SpawnRequest{Continue: cont, Type: a.Type, Team: a.Team, Name: a.Name, Task: WakeTask(a.Team, a.Name),
		Issue: a.Issue, Workdir: a.Workdir, Wake: true, IfRun: a.Run})
	if err != nil {
		if rerr := r.DB.ReleaseWake(context.WithoutCancel(ctx), c); rerr != nil {
			return rerr
		}
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, ErrAgentBusy):
			r.note("wake of %s/%s: %s; a later pass wakes it", a.Team, a.Name, text.OneLine(err.Error()))
			return nil
		case errors.Is(err, ErrSuperseded):
			// A person's spawn while this one waited for a slot: that
			// launch took the mail this wake was for.
			r.note("%s/%s was launched again meanwhile; no wake needed", a.Team, a.Name)
			return nil
		}
		p.count()
		r.note("error: wake of %s/%s: %s; the next pass retries", a.Team, a.Name, text.OneLine(err.Error()))
		return nil
	}
	if r.ReportWake == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return r.ReportWake(Woke{Kind: KindWake, Team: a.Team, Agent: a.Name, Mail: c.Newest, Status: res.Status, AfterSeconds: res.After.Seconds(),
		Run: res.Run, ExitCode: res.ExitCode, Log: res.Log})
}
