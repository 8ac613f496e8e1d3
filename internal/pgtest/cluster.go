package pgtest

import (
	"fmt"
	"syscall"
	"time"
)

// Cluster is a throwaway cluster of one test's own, apart from the shared
// one, so the test can stop and start it (a server restart) without
// disturbing any other. Close removes it.
type Cluster struct{ s *server }

// NewCluster starts a cluster of the test's own (initdb, then postgres on a
// free port). It needs the PostgreSQL server binaries (not a
// TEAMKIT_TEST_POSTGRES server: that one cannot be restarted).
func NewCluster() (*Cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	s, err := startCluster(bin)
	if err != nil {
		return nil, err
	}
	return &Cluster{s: s}, nil
}

// URL is the URL of a fresh database on the cluster.
func (c *Cluster) URL() (string, error) {
	name := fmt.Sprintf("teamkit_own_%d", dbSeq.Add(1))
	if err := c.s.admin("CREATE DATABASE " + name); err != nil {
		return "", fmt.Errorf("create database: %w", err)
	}
	u := *c.s.base
	u.Path = "/" + name
	return u.String(), nil
}

// Stop shuts the server down (fast shutdown: sessions are ended) and waits
// until it has gone.
func (c *Cluster) Stop() error {
	select {
	case <-c.s.exit:
		return nil // already stopped
	default:
	}
	c.s.proc.Process.Signal(syscall.SIGINT)
	select {
	case <-c.s.exit:
		return nil
	case <-time.After(time.Minute):
		return fmt.Errorf("postgres did not stop in a minute:\n%s", tail(c.s.log))
	}
}

// Start starts the stopped server again, on the same port with the same
// data, and waits until it accepts connections.
func (c *Cluster) Start() error {
	s, err := c.s.relaunch()
	if err != nil {
		return err
	}
	s.base, s.relaunch = c.s.base, c.s.relaunch
	c.s = s
	return s.ready()
}

// Close stops the server and removes its directory.
func (c *Cluster) Close() { c.s.remove() }
