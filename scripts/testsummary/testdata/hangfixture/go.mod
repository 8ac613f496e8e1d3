module github.com/teamkit/teamkit/hangfixture

go 1.26
