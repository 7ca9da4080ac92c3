// Jest setupFilesAfterEnv: in-process gateways of every test file log into the run's capture files.
import { overrideDefaultLogDestination } from '../../src/core/logging/log-destination.js';
import { captureDestination } from './log-capture.js';

overrideDefaultLogDestination(captureDestination());
