// Package temporalclient is how every wds process reaches Temporal: the client's options from the
// TEMPORAL_* settings (address, namespace, TLS), dialing, the SDK's quiet logger, and the Wds* search
// attributes' registration on a namespace.
package temporalclient
