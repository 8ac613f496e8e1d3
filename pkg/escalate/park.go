package escalate

import (
	"context"
	"errors"
	"fmt"

	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/roster"
	"github.com/teamkit/teamkit/pkg/text"
)

// unpark re-spawns, with its task, each agent of the team whose park has
// ended (roster.Respawnable): its last run ended on a usage limit that has
// since reset, or whose backoff has passed. The park is claimed first
// (mailbox.DB.ClaimPark, a compare-and-set), so of two passes that see it,
// one re-spawns the agent. An agent this pass re-spawns with an answer is
// left alone: that launch ends its park too.
func (p *pass) unpark() error {
	db, ctx := p.r.DB, p.ctx
	agents, err := db.Agents(ctx, p.r.Team)
	if err != nil {
		return err
	}
	now, err := db.Now(ctx)
	if err != nil {
		return err
	}
	for _, a := range agents {
		if a.ParkedUntil == nil || a.State != mailbox.StateExited {
			continue
		}
		if ok, _ := roster.Respawnable(a, now); !ok {
			continue
		}
		// Another pass claimed it and its launch is under way; a claim
		// whose launch never got recorded within StartingGrace was
		// abandoned (the pass died) and is taken over.
		if a.ParkClaim != "" && a.ParkClaimedAt != nil && now.Sub(*a.ParkClaimedAt) < roster.StartingGrace {
			continue
		}
		p.mu.Lock()
		busy := p.last[a.Name] != nil
		p.mu.Unlock()
		if busy {
			continue
		}
		run := p.r.NewRun()
		won, err := db.ClaimPark(ctx, a, run)
		if err != nil {
			return err
		}
		if !won {
			continue
		}
		p.mu.Lock()
		if p.err != nil {
			p.mu.Unlock()
			return p.err
		}
		p.goLocked(a.Team, a.Name, func() error { return p.respawnPark(a, run) }, nil)
	}
	return nil
}

// respawnPark starts parked agent a again as run, with the type, task,
// issue and workdir of its last launch. A launch that does not happen
// gives the claim back, so the next pass tries again.
func (p *pass) respawnPark(a mailbox.Agent, run string) error {
	ctx := p.ctx
	cont, err := p.continuation(a, NewsLimitReset)
	if err != nil {
		return err
	}
	res, err := p.r.Spawn(ctx, SpawnRequest{Continue: cont, Type: a.Type, Team: a.Team, Name: a.Name, Task: a.Task, Issue: a.Issue,
		Workdir: a.Workdir, ResumeOf: ParkKey(a.Run), Run: run, Wake: a.Wake == mailbox.WakeMail, IfRun: a.Run})
	if err != nil {
		if ctx.Err() != nil {
			// A launch called off in the host's queue never ran, but its
			// record ended the park: put the park back, so that a later
			// pass re-spawns the agent. Otherwise the claim lapses after
			// StartingGrace, and a later pass takes it over.
			if _, rerr := p.r.DB.RestorePark(context.WithoutCancel(ctx), a, run); rerr != nil {
				return rerr
			}
			return ctx.Err()
		}
		if _, rerr := p.r.DB.ReleasePark(context.WithoutCancel(ctx), a, run); rerr != nil {
			return rerr
		}
		if errors.Is(err, ErrSuperseded) {
			// A person's spawn while this one waited for a slot: that
			// launch ended the park, and runs what the person asked.
			p.r.note("%s/%s was launched again meanwhile, which ended its park", a.Team, a.Name)
			return nil
		}
		if errors.Is(err, ErrAgentBusy) {
			p.r.note("%s/%s: %s; a later pass re-spawns it once it has exited", a.Team, a.Name, text.OneLine(err.Error()))
			return nil
		}
		p.count()
		p.r.note("error: re-spawn of parked %s/%s: %s; the next pass retries", a.Team, a.Name, text.OneLine(err.Error()))
		return nil
	}
	r := Resumed{Team: a.Team, Agent: a.Name, Issue: a.Issue, Kind: KindPark, Parked: a.Run, Status: res.Status, Run: res.Run,
		AfterSeconds: res.After.Seconds(), ExitCode: res.ExitCode, Log: res.Log}
	if p.r.Report != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		if err := p.r.Report(r); err != nil {
			return fmt.Errorf("report the re-spawn of %s/%s: %w", a.Team, a.Name, err)
		}
	}
	return nil
}
