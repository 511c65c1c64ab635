/** The ScanPiece state (src/pipeline/states/scan-piece.ts). */
import { scanPiece } from '../src/pipeline/states/scan-piece.ts';
import { stateHandler } from './commons/runtime.ts';

export const handler = stateHandler('ScanPiece', scanPiece);
