/** doctor's checks in the order they run: each one after the checks it needs. */

import type { Check } from "../check.js";
import { authorizationServerCheck } from "./authorization-server.js";
import { confirmCheck } from "./confirm.js";
import { dnsCheck } from "./dns.js";
import { endpointCheck } from "./endpoint.js";
import { eraCheck } from "./era.js";
import { hiddenToolsCheck } from "./hidden-tools.js";
import { liveCheck } from "./live.js";
import { loginCheck } from "./login.js";
import { proxyCheck } from "./proxy.js";
import { registrationCheck } from "./registration.js";
import { resourceMetadataCheck } from "./resource-metadata.js";
import { tcpCheck } from "./tcp.js";
import { tlsCheck } from "./tls.js";
import { tokenStoreCheck } from "./token-store.js";
import { urlCheck } from "./url.js";

export const DOCTOR_CHECKS: readonly Check[] = [
  urlCheck,
  proxyCheck,
  dnsCheck,
  tcpCheck,
  tlsCheck,
  endpointCheck,
  resourceMetadataCheck,
  authorizationServerCheck,
  registrationCheck,
  tokenStoreCheck,
  loginCheck,
  eraCheck,
  liveCheck,
  hiddenToolsCheck,
  confirmCheck,
];
