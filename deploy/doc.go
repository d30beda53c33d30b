// Package deploy holds no code: its tests check the deployment files at the repository root
// (docker-compose.yml and Dockerfile) against what the code actually needs, since no container engine
// runs where the tests do.
package deploy
