// The kafka driver's client libraries by name (harness/model/kafka-libraries.ts lists them). The
// load loop (producer.ts), the ack ledger and the checker never know which one runs. Each loads
// lazily, so validating a scenario never pulls in a client library.
import type { KafkaLibraryName } from '../../model/kafka-libraries.ts';
import type { KafkaClientLibrary } from './library-types.ts';

const LOADERS: Record<KafkaLibraryName, () => Promise<KafkaClientLibrary>> = {
  rdkafka: async () => (await import('./rdkafka-client.ts')).rdkafkaLibrary(),
  platformatic: async () => (await import('./platformatic-client.ts')).platformaticLibrary(),
};

/** The named library's code, loaded on first use. */
export function loadKafkaLibrary(name: KafkaLibraryName): Promise<KafkaClientLibrary> {
  return LOADERS[name]();
}
