// model.ts objects -> program flatbuffer bytes (identifier ET12), through the
// generated builders. Inline data vectors are written 16-byte aligned, as the
// schema's force_align demands (the TypeScript generator does not honour it).

import * as flatbuffers from 'flatbuffers';
import { Program as FbProgram } from '../generated/executorch-flatbuffer/program.js';
import { ExecutionPlan as FbPlan } from '../generated/executorch-flatbuffer/execution-plan.js';
import { Instruction as FbInstruction } from '../generated/executorch-flatbuffer/instruction.js';
import { InstructionArguments } from '../generated/executorch-flatbuffer/instruction-arguments.js';
import { KernelCall as FbKernelCall } from '../generated/executorch-flatbuffer/kernel-call.js';
import { DelegateCall as FbDelegateCall } from '../generated/executorch-flatbuffer/delegate-call.js';
import { MoveCall as FbMoveCall } from '../generated/executorch-flatbuffer/move-call.js';
import { JumpFalseCall as FbJumpFalseCall } from '../generated/executorch-flatbuffer/jump-false-call.js';
import { FreeCall as FbFreeCall } from '../generated/executorch-flatbuffer/free-call.js';
import { Chain as FbChain } from '../generated/executorch-flatbuffer/chain.js';
import { Frame as FbFrame } from '../generated/executorch-flatbuffer/frame.js';
import { FrameList as FbFrameList } from '../generated/executorch-flatbuffer/frame-list.js';
import { Operator as FbOperator } from '../generated/executorch-flatbuffer/operator.js';
import { BackendDelegate as FbDelegate } from '../generated/executorch-flatbuffer/backend-delegate.js';
import { BackendDelegateDataReference as FbDataRef } from '../generated/executorch-flatbuffer/backend-delegate-data-reference.js';
import { CompileSpec as FbCompileSpec } from '../generated/executorch-flatbuffer/compile-spec.js';
import { ContainerMetadata as FbContainerMetadata } from '../generated/executorch-flatbuffer/container-metadata.js';
import { NonConstBufferDevice as FbNonConstBufferDevice } from '../generated/executorch-flatbuffer/non-const-buffer-device.js';
import { Buffer as FbBuffer } from '../generated/executorch-flatbuffer/buffer.js';
import { BackendDelegateInlineData as FbInlineData } from '../generated/executorch-flatbuffer/backend-delegate-inline-data.js';
import { DataSegment as FbDataSegment } from '../generated/executorch-flatbuffer/data-segment.js';
import { SubsegmentOffsets as FbSubsegmentOffsets } from '../generated/executorch-flatbuffer/subsegment-offsets.js';
import { NamedData as FbNamedData } from '../generated/executorch-flatbuffer/named-data.js';
import type * as M from './model.js';
import { FILE_IDENTIFIER } from './header.js';
import { INLINE_ALIGNMENT, bytes, evalue, int32s, int64s, keep, offsets, str, type B, type Offset } from './encode-values.js';

export { INLINE_ALIGNMENT } from './encode-values.js';

function instructionBody(b: B, ins: M.Instruction): [InstructionArguments, Offset] {
  switch (ins.type) {
    case 'None':
      return [InstructionArguments.NONE, 0];
    case 'KernelCall': {
      const args = keep(ins, 'args', ins.args.length) ? int32s(b, ins.args) : 0;
      FbKernelCall.startKernelCall(b);
      FbKernelCall.addOpIndex(b, ins.opIndex);
      if (args) FbKernelCall.addArgs(b, args);
      return [InstructionArguments.KernelCall, FbKernelCall.endKernelCall(b)];
    }
    case 'DelegateCall': {
      const args = keep(ins, 'args', ins.args.length) ? int32s(b, ins.args) : 0;
      FbDelegateCall.startDelegateCall(b);
      FbDelegateCall.addDelegateIndex(b, ins.delegateIndex);
      if (args) FbDelegateCall.addArgs(b, args);
      return [InstructionArguments.DelegateCall, FbDelegateCall.endDelegateCall(b)];
    }
    case 'MoveCall':
      return [InstructionArguments.MoveCall, FbMoveCall.createMoveCall(b, ins.moveFrom, ins.moveTo)];
    case 'JumpFalseCall':
      return [InstructionArguments.JumpFalseCall, FbJumpFalseCall.createJumpFalseCall(b, ins.condValueIndex, ins.destinationInstruction)];
    case 'FreeCall':
      return [InstructionArguments.FreeCall, FbFreeCall.createFreeCall(b, ins.valueIndex)];
  }
}

function instruction(b: B, ins: M.Instruction): Offset {
  const [type, body] = instructionBody(b, ins);
  FbInstruction.startInstruction(b);
  FbInstruction.addInstrArgsType(b, type);
  if (body) FbInstruction.addInstrArgs(b, body);
  return FbInstruction.endInstruction(b);
}

function frameList(b: B, fl: M.FrameList): Offset {
  const items = keep(fl, 'items', fl.items.length)
    ? offsets(
        b,
        fl.items.map((fr) => {
          const filename = str(b, fr.filename);
          const name = str(b, fr.name);
          const context = str(b, fr.context);
          FbFrame.startFrame(b);
          if (filename) FbFrame.addFilename(b, filename);
          FbFrame.addLineno(b, fr.lineno);
          if (name) FbFrame.addName(b, name);
          if (context) FbFrame.addContext(b, context);
          return FbFrame.endFrame(b);
        }),
      )
    : 0;
  FbFrameList.startFrameList(b);
  if (items) FbFrameList.addItems(b, items);
  return FbFrameList.endFrameList(b);
}

function chain(b: B, c: M.Chain): Offset {
  const inputs = keep(c, 'inputs', c.inputs.length) ? int32s(b, c.inputs) : 0;
  const outputs = keep(c, 'outputs', c.outputs.length) ? int32s(b, c.outputs) : 0;
  const instructions = keep(c, 'instructions', c.instructions.length)
    ? offsets(
        b,
        c.instructions.map((i) => instruction(b, i)),
      )
    : 0;
  const stacktrace = keep(c, 'stacktrace', c.stacktrace.length)
    ? offsets(
        b,
        c.stacktrace.map((fl) => frameList(b, fl)),
      )
    : 0;
  FbChain.startChain(b);
  if (inputs) FbChain.addInputs(b, inputs);
  if (outputs) FbChain.addOutputs(b, outputs);
  if (instructions) FbChain.addInstructions(b, instructions);
  if (stacktrace) FbChain.addStacktrace(b, stacktrace);
  return FbChain.endChain(b);
}

function delegate(b: B, d: M.BackendDelegate): Offset {
  const id = str(b, d.id);
  const specs = keep(d, 'compile_specs', d.compileSpecs.length)
    ? offsets(
        b,
        d.compileSpecs.map((cs) => {
          const key = str(b, cs.key);
          const value = keep(cs, 'value', cs.value.length) ? bytes(b, cs.value) : 0;
          FbCompileSpec.startCompileSpec(b);
          if (key) FbCompileSpec.addKey(b, key);
          if (value) FbCompileSpec.addValue(b, value);
          return FbCompileSpec.endCompileSpec(b);
        }),
      )
    : 0;
  const processed = d.processed ? FbDataRef.createBackendDelegateDataReference(b, d.processed.location, d.processed.index) : 0;
  FbDelegate.startBackendDelegate(b);
  if (id) FbDelegate.addId(b, id);
  if (processed) FbDelegate.addProcessed(b, processed);
  if (specs) FbDelegate.addCompileSpecs(b, specs);
  return FbDelegate.endBackendDelegate(b);
}

function plan(b: B, p: M.ExecutionPlan): Offset {
  const name = str(b, p.name);
  let meta = 0;
  if (p.containerMetaType) {
    const inp = str(b, p.containerMetaType.encodedInpStr);
    const out = str(b, p.containerMetaType.encodedOutStr);
    FbContainerMetadata.startContainerMetadata(b);
    if (inp) FbContainerMetadata.addEncodedInpStr(b, inp);
    if (out) FbContainerMetadata.addEncodedOutStr(b, out);
    meta = FbContainerMetadata.endContainerMetadata(b);
  }
  const values = keep(p, 'values', p.values.length)
    ? offsets(
        b,
        p.values.map((v) => evalue(b, v)),
      )
    : 0;
  const inputs = keep(p, 'inputs', p.inputs.length) ? int32s(b, p.inputs) : 0;
  const outputs = keep(p, 'outputs', p.outputs.length) ? int32s(b, p.outputs) : 0;
  const chains = keep(p, 'chains', p.chains.length)
    ? offsets(
        b,
        p.chains.map((c) => chain(b, c)),
      )
    : 0;
  const operators = keep(p, 'operators', p.operators.length)
    ? offsets(
        b,
        p.operators.map((o) => {
          const n = str(b, o.name);
          const ov = str(b, o.overload);
          FbOperator.startOperator(b);
          if (n) FbOperator.addName(b, n);
          if (ov) FbOperator.addOverload(b, ov);
          return FbOperator.endOperator(b);
        }),
      )
    : 0;
  const delegates = keep(p, 'delegates', p.delegates.length)
    ? offsets(
        b,
        p.delegates.map((d) => delegate(b, d)),
      )
    : 0;
  const sizes = keep(p, 'non_const_buffer_sizes', p.nonConstBufferSizes.length) ? int64s(b, p.nonConstBufferSizes) : 0;
  const devices = keep(p, 'non_const_buffer_device', p.nonConstBufferDevice.length)
    ? offsets(
        b,
        p.nonConstBufferDevice.map((d) => FbNonConstBufferDevice.createNonConstBufferDevice(b, d.bufferIdx, d.deviceType, d.deviceIndex)),
      )
    : 0;
  FbPlan.startExecutionPlan(b);
  if (name) FbPlan.addName(b, name);
  if (meta) FbPlan.addContainerMetaType(b, meta);
  if (values) FbPlan.addValues(b, values);
  if (inputs) FbPlan.addInputs(b, inputs);
  if (outputs) FbPlan.addOutputs(b, outputs);
  if (chains) FbPlan.addChains(b, chains);
  if (operators) FbPlan.addOperators(b, operators);
  if (delegates) FbPlan.addDelegates(b, delegates);
  if (sizes) FbPlan.addNonConstBufferSizes(b, sizes);
  if (devices) FbPlan.addNonConstBufferDevice(b, devices);
  return FbPlan.endExecutionPlan(b);
}

function subsegments(b: B, s: M.SubsegmentOffsets): Offset {
  const offs = keep(s, 'offsets', s.offsets.length) ? int64s(b, s.offsets) : 0;
  FbSubsegmentOffsets.startSubsegmentOffsets(b);
  FbSubsegmentOffsets.addSegmentIndex(b, s.segmentIndex);
  if (offs) FbSubsegmentOffsets.addOffsets(b, offs);
  return FbSubsegmentOffsets.endSubsegmentOffsets(b);
}

/**
 * Encodes a program as a flatbuffer with the ET12 identifier and no extended
 * header (the writer inserts that). The result's length is a multiple of 16,
 * so inserting a 32-byte header keeps every inline vector aligned.
 */
export function encodeProgram(program: M.Program): Uint8Array {
  const b = new flatbuffers.Builder(1024 + program.constantBuffer.reduce((n, c) => n + c.storage.length, 0));
  const plans = keep(program, 'execution_plan', program.executionPlan.length)
    ? offsets(
        b,
        program.executionPlan.map((p) => plan(b, p)),
      )
    : 0;
  const constants = keep(program, 'constant_buffer', program.constantBuffer.length)
    ? offsets(
        b,
        program.constantBuffer.map((c) => {
          const storage = keep(c, 'storage', c.storage.length) ? bytes(b, c.storage, INLINE_ALIGNMENT) : 0;
          FbBuffer.startBuffer(b);
          if (storage) FbBuffer.addStorage(b, storage);
          return FbBuffer.endBuffer(b);
        }),
      )
    : 0;
  const inline = keep(program, 'backend_delegate_data', program.backendDelegateData.length)
    ? offsets(
        b,
        program.backendDelegateData.map((d) => {
          const data = keep(d, 'data', d.data.length) ? bytes(b, d.data, INLINE_ALIGNMENT) : 0;
          FbInlineData.startBackendDelegateInlineData(b);
          if (data) FbInlineData.addData(b, data);
          return FbInlineData.endBackendDelegateInlineData(b);
        }),
      )
    : 0;
  const segments = keep(program, 'segments', program.segments.length)
    ? offsets(
        b,
        program.segments.map((s) => FbDataSegment.createDataSegment(b, s.offset, s.size)),
      )
    : 0;
  const constantSegment = program.constantSegment ? subsegments(b, program.constantSegment) : 0;
  const mutable = keep(program, 'mutable_data_segments', program.mutableDataSegments.length)
    ? offsets(
        b,
        program.mutableDataSegments.map((s) => subsegments(b, s)),
      )
    : 0;
  const named = keep(program, 'named_data', program.namedData.length)
    ? offsets(
        b,
        program.namedData.map((n) => {
          const key = str(b, n.key);
          FbNamedData.startNamedData(b);
          if (key) FbNamedData.addKey(b, key);
          FbNamedData.addSegmentIndex(b, n.segmentIndex);
          return FbNamedData.endNamedData(b);
        }),
      )
    : 0;
  FbProgram.startProgram(b);
  FbProgram.addVersion(b, program.version);
  if (plans) FbProgram.addExecutionPlan(b, plans);
  if (constants) FbProgram.addConstantBuffer(b, constants);
  if (inline) FbProgram.addBackendDelegateData(b, inline);
  if (segments) FbProgram.addSegments(b, segments);
  if (constantSegment) FbProgram.addConstantSegment(b, constantSegment);
  if (mutable) FbProgram.addMutableDataSegments(b, mutable);
  if (named) FbProgram.addNamedData(b, named);
  const root = FbProgram.endProgram(b);
  // Pad so the total is a multiple of 16: flatbuffers aligns relative to the
  // buffer's end, and a 16-multiple length keeps that true from the start.
  b.prep(INLINE_ALIGNMENT, 8);
  b.finish(root, FILE_IDENTIFIER);
  return b.asUint8Array();
}
