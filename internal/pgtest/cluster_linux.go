package pgtest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
)

// startCluster starts a throwaway cluster from the binaries in bin. It is
// Linux only: it runs the cluster as the postgres user when root, and ties
// the postmaster's life to this process with Pdeathsig.
func startCluster(bin string) (*server, error) {
	var cred *syscall.Credential
	uid, gid := -1, -1
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, errors.New("running as root, and initdb refuses root: no \"postgres\" system user to run the cluster as")
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	dir, err := os.MkdirTemp("", "teamkit-pgtest-")
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(dir)
		}
	}()
	pw := make([]byte, 12)
	rand.Read(pw)
	password := hex.EncodeToString(pw)
	pwfile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwfile, []byte(password+"\n"), 0o600); err != nil {
		return nil, err
	}
	if cred != nil {
		for _, p := range []string{dir, pwfile} {
			if err := os.Chown(p, uid, gid); err != nil {
				return nil, err
			}
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "teamkit", "--pwfile", pwfile,
		"--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	os.Remove(pwfile)

	for attempt := 0; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s, err := launch(bin, dir, data, port, cred)
		if err == nil {
			s.relaunch = func() (*server, error) { return launch(bin, dir, data, port, cred) }
			s.base = &url.URL{Scheme: "postgres", User: url.UserPassword("teamkit", password),
				Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Path: "/postgres", RawQuery: "sslmode=disable"}
			if err = s.ready(); err == nil {
				ok = true
				return s, nil
			}
			s.proc.Process.Kill()
			<-s.exit
		}
		if attempt == 2 {
			return nil, err
		}
	}
}

// launch starts the postmaster. Durability is off (a throwaway cluster);
// it listens on 127.0.0.1 only, with its socket in the temporary directory.
func launch(bin, dir, data string, port int, cred *syscall.Credential) (*server, error) {
	logPath := filepath.Join(dir, "postgres.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port), "-k", dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "max_connections=300", "-c", "shared_buffers=32MB")
	cmd.Stdout, cmd.Stderr = logf, logf
	// The postmaster dies with this test binary, however that ends
	// (a panic, a -timeout, a SIGKILL): its backends follow it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT, Setpgid: true}
	started := make(chan error, 1)
	s := &server{proc: cmd, dir: dir, log: logPath, exit: make(chan struct{})}
	go func() {
		// Pdeathsig follows the thread that started the child: keep it
		// for the life of the process.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		cmd.Wait()
		close(s.exit)
		select {} // never unlock this thread, never let it exit
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return s, nil
}
