package escalate

import (
	"sync"

	"github.com/teamkit/teamkit/pkg/github"
	"github.com/teamkit/teamkit/pkg/slack"
)

// Config is the escalation configuration, read from the environment once
// (FromEnv), and the one factory of the GitHub and Slack clients, each
// made on first need and then shared (as gh's commands get theirs): ask
// and resume build their channels here and nowhere else.
type Config struct {
	// Getenv is the environment go-gh reads the GitHub token and host
	// from (GH_TOKEN, GITHUB_TOKEN, GITHUB_API_URL, the gh login).
	Getenv func(string) string
	// Deciders is who may approve on GitHub and locally: logins, a,b or
	// @FILE (TEAMKIT_DECIDERS; resume --deciders overrides it).
	Deciders string
	// Slack: the tokens, the channel questions go to, its API base, and who
	// may answer there (TEAMKIT_SLACK_DECIDERS, overridden by
	// --slack-deciders; TEAMKIT_SLACK_ANSWERERS).
	SlackBotToken, SlackAppToken, SlackChannel, SlackAPIURL string
	SlackDeciders, SlackAnswerers                           string
	// SlackWebhook is the one-way mirror's incoming webhook.
	SlackWebhook string

	ghOnce sync.Once
	gh     GitHub
	ghErr  error
	slOnce sync.Once
	sl     *slack.Client
	slErr  error
}

// EnvDeciders and EnvSlackWebhook are read by FromEnv too.
const (
	EnvDeciders     = "TEAMKIT_DECIDERS"
	EnvSlackWebhook = "TEAMKIT_SLACK_WEBHOOK"
)

// FromEnv reads the configuration.
func FromEnv(getenv func(string) string) *Config {
	return &Config{
		Getenv:         getenv,
		Deciders:       getenv(EnvDeciders),
		SlackBotToken:  getenv(EnvSlackBotToken),
		SlackAppToken:  getenv(EnvSlackAppToken),
		SlackChannel:   getenv(EnvSlackChannel),
		SlackAPIURL:    getenv(EnvSlackAPIURL),
		SlackDeciders:  getenv(EnvSlackDeciders),
		SlackAnswerers: getenv(EnvSlackAnswerers),
		SlackWebhook:   getenv(EnvSlackWebhook),
	}
}

// GitHub is the GitHub client, made on first call.
func (c *Config) GitHub() (GitHub, error) {
	c.ghOnce.Do(func() {
		gh, err := github.New(github.Options{Getenv: c.Getenv})
		if err == nil {
			c.gh = gh
		}
		c.ghErr = err
	})
	return c.gh, c.ghErr
}

// Slack is the Slack client (bot and app tokens), made on first call: one
// client serves ask, every pass and the Socket-Mode listener, so a 429's
// Retry-After is kept from one pass to the next.
func (c *Config) Slack() (*slack.Client, error) {
	c.slOnce.Do(func() {
		c.sl, c.slErr = slack.New(slack.Options{BotToken: c.SlackBotToken, AppToken: c.SlackAppToken, APIURL: c.SlackAPIURL})
	})
	return c.sl, c.slErr
}

// ReadDeciders reads the deciders list (again: a list in a file may change).
func (c *Config) ReadDeciders() (Deciders, error) { return ParseDeciders(c.Deciders, ReadListFile) }

// ReadSlackPeople reads who may answer in Slack (again).
func (c *Config) ReadSlackPeople() (SlackPeople, error) {
	return ReadSlackPeople(c.SlackDeciders, c.SlackAnswerers, ReadListFile)
}

// Channels are the channels, in the order an ask is posted and read: the
// local one, GitHub (so Slack's message can link the issue comment), then
// Slack. This is where a channel is registered.
func (c *Config) Channels() []Channel {
	sl := &SlackChannel{Channel: c.SlackChannel, People: c.ReadSlackPeople}
	if c.SlackBotToken != "" {
		sl.Client = func() (Slack, error) { return c.Slack() }
	}
	return []Channel{
		LocalChannel{},
		&GitHubChannel{Client: c.GitHub, Deciders: c.ReadDeciders},
		sl,
	}
}
